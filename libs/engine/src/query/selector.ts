// The selector lives in @s4/core: the hot tiers filter their scans with it too.
export { matchersOf, selects, type TagSelector } from '@s4/core';
