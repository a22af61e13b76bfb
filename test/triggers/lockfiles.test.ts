import { describe, expect, it } from 'vitest';
import { lockfileChange } from '../../triggers/index.js';
import { npmV1, npmV3, pnpmV6, pnpmV9, yarnBerry, yarnV1 } from '../support/lockfile-texts.js';

// Bumping qs changes express's closure.

describe('lockfile narrowing: the packages whose resolved dependency closure changed', () => {
  it('yarn: an entry whose descriptor list changed while its resolution did not is no change (issue 32)', () => {
    const before = yarnV1('6.11.0');
    const after = before.replace('qs@^6.0.0, qs@^6.5.0:', 'qs@^6.0.0, qs@^6.2.0, qs@^6.5.0:');
    expect(after).not.toBe(before);
    expect(lockfileChange('yarn.lock', before, after)).toMatchObject({ packages: new Set() });
  });

  it('npm v3 and v1: a bumped transitive package names the package holding it, however hoisted', () => {
    expect(lockfileChange('package-lock.json', npmV3('6.11.0'), npmV3('6.11.1'))).toMatchObject({ packages: new Set(['qs', 'express']) });
    // What was bumped under each package whose closure changed: qs, also under express.
    expect(lockfileChange('package-lock.json', npmV3('6.11.0'), npmV3('6.11.1'))).toMatchObject({
      bumpedUnder: new Map([
        ['qs', ['qs']],
        ['express', ['qs']],
      ]),
    });
    expect(lockfileChange('package-lock.json', npmV3('6.11.0'), npmV3('6.11.0'))).toMatchObject({ packages: new Set() });
    expect(lockfileChange('npm-shrinkwrap.json', npmV1('6.11.0'), npmV1('6.11.1'))).toMatchObject({ packages: new Set(['qs', 'express']) });
  });

  it('yarn.lock v1 and Berry: entries under several descriptors, workspace entries left to the graph', () => {
    expect(lockfileChange('yarn.lock', yarnV1('6.11.0'), yarnV1('6.11.1'))).toMatchObject({ packages: new Set(['qs', 'express']) });
    expect(lockfileChange('yarn.lock', yarnBerry('6.11.0'), yarnBerry('6.11.1'))).toMatchObject({ packages: new Set(['qs', 'express']) });
    // Yarn 2 and 3 leave the default npm: protocol out of dependency ranges.
    const yarn3 = (qs: string): string => yarnBerry(qs).replace('qs: "npm:^6.5.0"', 'qs: ^6.5.0');
    expect(lockfileChange('yarn.lock', yarn3('6.11.0'), yarn3('6.11.1'))).toMatchObject({ packages: new Set(['qs', 'express']) });
  });

  it('pnpm-lock.yaml v9 and v6: importers whose direct dependencies reach the change, relative to the repository', () => {
    expect(lockfileChange('pnpm-lock.yaml', pnpmV9('6.11.0'), pnpmV9('6.11.1'))).toMatchObject({
      packages: new Set(['qs', 'express']),
      importers: new Set(['packages/a']),
    });
    expect(lockfileChange('services/pnpm-lock.yaml', pnpmV6('6.11.0'), pnpmV6('6.11.1'))).toMatchObject({
      packages: new Set(['qs', 'express']),
      importers: new Set(['services/packages/a']),
    });
    // A snapshot with nothing under it is YAML null, and still a package others depend on (found by the triggers bench).
    const bare = (qs: string): string => pnpmV9(qs).replace(`  qs@${qs}: {}`, `  qs@${qs}:`);
    expect(lockfileChange('pnpm-lock.yaml', bare('6.11.0'), bare('6.11.1'))).toMatchObject({
      packages: new Set(['qs', 'express']),
      importers: new Set(['packages/a']),
    });
    // The root importer's own tool (prettier) changing names the repository root.
    const bumped = pnpmV9('6.11.0').replaceAll('prettier@3.0.0', 'prettier@3.0.1').replace('version: 3.0.0 }', 'version: 3.0.1 }');
    expect(lockfileChange('pnpm-lock.yaml', pnpmV9('6.11.0'), bumped)).toMatchObject({ packages: new Set(['prettier']), importers: new Set(['']) });
  });

  it('a lockfile that appears is compared with nothing; an unreadable one says where and why', () => {
    expect(lockfileChange('yarn.lock', undefined, yarnV1('6.11.0'))).toMatchObject({ packages: new Set(['qs', 'express', 'left-pad']) });
    expect(lockfileChange('package-lock.json', '{"lockfileVersion": 3', npmV3('1'))).toEqual({
      unreadable: expect.stringMatching(/^package-lock\.json at base is not a readable npm lockfile: /),
    });
    expect(lockfileChange('pnpm-lock.yaml', pnpmV9('1'), 'importers: {}\n')).toEqual({
      unreadable: 'pnpm-lock.yaml at head is not a readable pnpm lockfile: no lockfileVersion',
    });
    expect(lockfileChange('yarn.lock', yarnV1('1'), 'express@^4.0.0:\n  version "4.18.0"\n    bad: indentation\n')).toEqual({
      unreadable: expect.stringMatching(/^yarn\.lock at head is not a readable yarn lockfile/),
    });
  });
});
