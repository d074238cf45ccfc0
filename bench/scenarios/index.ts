// Every scenario `make bench` runs, in order; a new family of scenarios adds its table here.
import type { Scenario } from '../scenario.js';
import { entityScenarios } from './entities.js';

export const scenarios: Scenario[] = [...entityScenarios];
