import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from './temp-dir.js';

/** A throwaway self-signed identity for 127.0.0.1 and localhost; openssl's arguments are an array, no shell. */
export async function selfSignedIdentity(): Promise<{ cert: Buffer; key: Buffer }> {
  const dir = await tempDir('tandem-tls-');
  const [cert, key] = [join(dir, 'cert.pem'), join(dir, 'key.pem')];
  const subject = ['-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'];
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert, '-days', '1', ...subject],
    {
      stdio: 'ignore',
    },
  );
  return { cert: await readFile(cert), key: await readFile(key) };
}
