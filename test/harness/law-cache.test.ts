import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fileLawCache, lawCacheDir, useLawCache, type LawShape } from '../../harness/judge/law-cache.js';
import { lawAtHand, lawFingerprint, simulatedLaw, type LawKey } from '../../harness/judge/sequential.js';

const keyOf = (key: LawKey): string => `${key.maxTrials}|${key.slotted}|${key.serial}|${key.estimator}`;

const dirs: string[] = [];
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-laws-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  useLawCache(undefined);
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const design: LawKey = { maxTrials: 8, slotted: true, serial: 'given', estimator: 'huber' };
const shapeOf = (key: LawKey): LawShape => ({ key: keyOf(key), simulations: 16_000, fingerprint: () => lawFingerprint(key) });
const onlyLaw = (dir: string): string =>
  join(
    dir,
    readdirSync(dir).find((name) => name.endsWith('.bin'))!,
  );

describe('laws of the looks kept on disk', () => {
  const law = simulatedLaw(design);

  it('reads back exactly the law it kept, in a directory and file only the user may touch', () => {
    const dir = join(tempDir(), 'laws');
    const cache = fileLawCache(dir);
    expect(cache.read(design, shapeOf(design))).toBeUndefined();
    cache.write(design, law, shapeOf(design));
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(onlyLaw(dir)).mode & 0o777).toBe(0o600);
    const read = cache.read(design, shapeOf(design))!;
    expect(read.sorted.length).toBe(8);
    for (let look = 0; look < 8; look++) {
      expect(read.sorted[look]).toEqual(law.sorted[look]);
      expect(read.calibrated[look]).toEqual(law.calibrated[look]);
    }
    // Another design is another file: never served this one's law.
    expect(cache.read({ ...design, slotted: false }, shapeOf({ ...design, slotted: false }))).toBeUndefined();
  });

  it('is a miss when the code would simulate another law: a fingerprint that is not this code’s, or another sequence count', () => {
    const dir = tempDir();
    const cache = fileLawCache(dir);
    cache.write(design, law, { ...shapeOf(design), fingerprint: () => 'the fingerprint of an older judge' });
    expect(cache.read(design, shapeOf(design))).toBeUndefined();
    cache.write(design, law, shapeOf(design));
    expect(cache.read(design, { ...shapeOf(design), simulations: 8_000 })).toBeUndefined();
    expect(cache.read(design, shapeOf(design))).toBeDefined();
  });

  it('is a miss when the file was damaged, cut short, or is writable by others', () => {
    const dir = tempDir();
    const cache = fileLawCache(dir);
    cache.write(design, law, shapeOf(design));
    const file = onlyLaw(dir);
    const whole = readFileSync(file);
    const damaged = Buffer.from(whole);
    damaged[damaged.length - 100] = damaged[damaged.length - 100]! ^ 0xff;
    writeFileSync(file, damaged);
    expect(cache.read(design, shapeOf(design))).toBeUndefined();
    writeFileSync(file, whole.subarray(0, whole.length - 8));
    expect(cache.read(design, shapeOf(design))).toBeUndefined();
    writeFileSync(file, 'not a law\n');
    expect(cache.read(design, shapeOf(design))).toBeUndefined();
    writeFileSync(file, whole);
    expect(cache.read(design, shapeOf(design))).toBeDefined();
    chmodSync(file, 0o666);
    expect(cache.read(design, shapeOf(design))).toBeUndefined();
    chmodSync(file, 0o600);
    chmodSync(dir, 0o777);
    expect(cache.read(design, shapeOf(design))).toBeUndefined();
  });

  it('keeps the sixteen laws written last and removes what a killed writer left', () => {
    const dir = tempDir();
    const cache = fileLawCache(dir);
    const small = (maxTrials: number): LawKey => ({ maxTrials, slotted: false, serial: 'own', estimator: 'mean' });
    // Laws of any content will do here: eviction reads names and times only.
    const fake = { sorted: [new Float64Array(4)], calibrated: [new Float64Array(4)] };
    const stale = join(dir, 'law-9-slotted-given-huber.bin.1234.abcd.partial');
    writeFileSync(stale, 'half a law');
    utimesSync(stale, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
    for (let n = 1; n <= 17; n++) {
      cache.write(small(n), fake, { key: keyOf(small(n)), simulations: 4, fingerprint: () => 'f' });
      // Written a second apart as the file system sees it, so "last" is well defined.
      utimesSync(join(dir, `law-${n}-unslotted-own-mean.bin`), new Date(1_000_000 * n), new Date(1_000_000 * n));
    }
    cache.write(small(18), fake, { key: keyOf(small(18)), simulations: 4, fingerprint: () => 'f' });
    const names = readdirSync(dir);
    expect(names.filter((name) => name.endsWith('.bin'))).toHaveLength(16);
    expect(names).not.toContain('law-1-unslotted-own-mean.bin');
    expect(names).not.toContain('law-2-unslotted-own-mean.bin');
    expect(names).toContain('law-18-unslotted-own-mean.bin');
    expect(names.some((name) => name.endsWith('.partial'))).toBe(false);
  });

  it('serves the looks: a law kept by one process is at hand for the next without simulating', () => {
    const dir = tempDir();
    // A design no other test in this file simulates, so this process has not kept its law.
    const key: LawKey = { maxTrials: 7, slotted: false, serial: 'given', estimator: 'huber' };
    fileLawCache(dir).write(key, simulatedLaw(key), shapeOf(key));
    expect(lawAtHand(key)).toBe(false);
    useLawCache(fileLawCache(dir));
    expect(lawAtHand(key)).toBe(true);
    // Kept for this process now, as if its looks had simulated it: what they judge on.
    expect(lawAtHand(key)).toBe(true);
  });

  it('lives where the CLI is told, or in the user’s cache directory; an empty TANDEM_CACHE_DIR turns it off', () => {
    expect(lawCacheDir({ TANDEM_CACHE_DIR: '/srv/cache' })).toBe('/srv/cache/laws');
    expect(lawCacheDir({ TANDEM_CACHE_DIR: '' })).toBeUndefined();
    expect(lawCacheDir({ XDG_CACHE_HOME: '/home/u/.xdg' })).toBe('/home/u/.xdg/tandem/laws');
    expect(lawCacheDir({})).toMatch(/\.cache\/tandem\/laws$/);
    expect(lawCacheDir({}, () => '/home/u')).toBe('/home/u/.cache/tandem/laws');
    // No home at all (os.homedir throws without a passwd entry or HOME): no cache, and every command still runs.
    expect(
      lawCacheDir({}, () => {
        throw new Error('ENOENT: no such file or directory, uv_os_homedir');
      }),
    ).toBeUndefined();
  });
});
