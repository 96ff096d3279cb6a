// Test certificates made with the openssl command at test time (never committed), EC P-256 keys valid for
// two days: a CA; a server certificate for DNS:localhost and IP:127.0.0.1 signed by it; a second server
// certificate for DNS:localhost only (a client dialling 127.0.0.1 needs the server-name override to accept
// it); a client certificate signed by the CA; an unrelated CA with a client certificate of its own, which a
// mutual-TLS server must refuse.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface Certs {
  dir: string;
  ca: string;
  serverCert: string;
  serverKey: string;
  dnsOnlyCert: string;
  dnsOnlyKey: string;
  clientCert: string;
  clientKey: string;
  otherCa: string;
  otherCert: string;
  otherKey: string;
}

function openssl(dir: string, args: string[]): void {
  try {
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
  } catch (e) {
    const stderr = (e as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new Error(`openssl ${args.join(' ')} failed: ${(e as Error).message}\n${stderr}`);
  }
}

function key(dir: string, name: string): void {
  openssl(dir, ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', name]);
}

function ca(dir: string, name: string, subject: string): void {
  key(dir, `${name}.key`);
  openssl(dir, ['req', '-x509', '-new', '-key', `${name}.key`, '-out', `${name}.pem`, '-days', '2', '-subj', subject]);
}

function sign(dir: string, name: string, issuer: string, subject: string, extensions: string): void {
  key(dir, `${name}.key`);
  openssl(dir, ['req', '-new', '-key', `${name}.key`, '-out', `${name}.csr`, '-subj', subject]);
  fs.writeFileSync(path.join(dir, `${name}.ext`), extensions);
  openssl(dir, [
    'x509', '-req', '-in', `${name}.csr`, '-CA', `${issuer}.pem`, '-CAkey', `${issuer}.key`, '-CAcreateserial',
    '-out', `${name}.pem`, '-days', '2', '-extfile', `${name}.ext`,
  ]);
}

/** Writes every certificate and key into dir (which must exist). */
export function makeCerts(dir: string): Certs {
  ca(dir, 'ca', '/CN=denoc node test CA');
  sign(dir, 'server', 'ca', '/CN=localhost', 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  sign(dir, 'dns-only', 'ca', '/CN=localhost', 'subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n');
  sign(dir, 'client', 'ca', '/CN=denoc test client', 'extendedKeyUsage=clientAuth\n');
  ca(dir, 'other-ca', '/CN=another CA');
  sign(dir, 'other', 'other-ca', '/CN=client of another CA', 'extendedKeyUsage=clientAuth\n');
  const at = (f: string): string => path.join(dir, f);
  return {
    dir,
    ca: at('ca.pem'),
    serverCert: at('server.pem'),
    serverKey: at('server.key'),
    dnsOnlyCert: at('dns-only.pem'),
    dnsOnlyKey: at('dns-only.key'),
    clientCert: at('client.pem'),
    clientKey: at('client.key'),
    otherCa: at('other-ca.pem'),
    otherCert: at('other.pem'),
    otherKey: at('other.key'),
  };
}
