// Every scenario `make bench` runs, in order; a new family of scenarios adds its table here.
import type { Scenario } from '../scenario.js';
import { entityScenarios } from './entities.js';
import { queryScenarios } from './query.js';

export const scenarios: Scenario[] = [...entityScenarios, ...queryScenarios];
