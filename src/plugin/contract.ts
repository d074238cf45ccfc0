// What every plugin category shares: option declarations and the host a plugin is registered with.
// Plugins import contract files only (ARCHITECTURE.md, "Contracts are the walls").

export type OptionType = 'string' | 'int' | 'number' | 'bool' | 'enum';

/** One command-line option. The same table drives parsing, the environment (`BROKER_<NAME>`) and `-u`. */
export interface OptionSpec {
  name: string;
  alias?: string;
  type: OptionType;
  values?: readonly string[];
  /** An enum that also takes any other text, named so in `-u` (e.g. `<plugin>`: a plugin's name or path). */
  other?: string;
  default?: string | number | boolean;
  help: string;
  /** Lower bound for int/number options. */
  min?: number;
}

export type OptionValues = Record<string, string | number | boolean | undefined>;

/** The subset of pino's logger a plugin may use. */
export interface PluginLogger {
  debug(obj: object | string, msg?: string): void;
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
}

/** Given to a plugin's register function in every thread that loads it. */
export interface PluginHost {
  /** The plugin's own options (declared in its exported `options`), parsed. */
  options: OptionValues;
  /** True in the front (main) thread: the instance that owns the plugin's background threads. */
  primary: boolean;
  log: PluginLogger;
  /** Expansion of a term with the broker's default context (core + --defaultUserContext). */
  expandDefault(term: string): string;
}
