"""Test certificates made with the openssl command at test time (never committed).

``make_certs(directory)`` writes, with EC P-256 keys valid for two days:

- ``ca``: a test CA;
- ``server_cert``/``server_key``: signed by it for DNS:localhost and IP:127.0.0.1;
- ``dns_only_cert``/``dns_only_key``: signed by it for DNS:localhost only (a client dialling 127.0.0.1 needs
  the server-name override to accept it);
- ``client_cert``/``client_key``: a client certificate signed by the CA;
- ``other_ca``, ``other_cert``/``other_key``: an unrelated CA and a client certificate of its own, which a
  mutual-TLS server must refuse.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Certs:
    ca: Path
    server_cert: Path
    server_key: Path
    dns_only_cert: Path
    dns_only_key: Path
    client_cert: Path
    client_key: Path
    other_ca: Path
    other_cert: Path
    other_key: Path


def _openssl(directory: Path, *args: str) -> None:
    result = subprocess.run(["openssl", *args], cwd=directory, capture_output=True, text=True, timeout=60,
                            check=False)
    if result.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)} failed:\n{result.stderr}")


def _key(directory: Path, name: str) -> None:
    _openssl(directory, "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", name)


def _ca(directory: Path, name: str, subject: str) -> None:
    _key(directory, f"{name}.key")
    _openssl(directory, "req", "-x509", "-new", "-key", f"{name}.key", "-out", f"{name}.pem", "-days", "2",
             "-subj", subject)


def _sign(directory: Path, name: str, ca: str, subject: str, extensions: str) -> None:
    _key(directory, f"{name}.key")
    _openssl(directory, "req", "-new", "-key", f"{name}.key", "-out", f"{name}.csr", "-subj", subject)
    (directory / f"{name}.ext").write_text(extensions)
    _openssl(directory, "x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
             "-CAcreateserial", "-out", f"{name}.pem", "-days", "2", "-extfile", f"{name}.ext")


def make_certs(directory: Path) -> Certs:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    _ca(directory, "ca", "/CN=denoc python test CA")
    _sign(directory, "server", "ca", "/CN=localhost",
          "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    _sign(directory, "dns-only", "ca", "/CN=localhost", "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n")
    _sign(directory, "client", "ca", "/CN=denoc test client", "extendedKeyUsage=clientAuth\n")
    _ca(directory, "other-ca", "/CN=another CA")
    _sign(directory, "other", "other-ca", "/CN=client of another CA", "extendedKeyUsage=clientAuth\n")
    d = directory
    return Certs(ca=d / "ca.pem", server_cert=d / "server.pem", server_key=d / "server.key",
                 dns_only_cert=d / "dns-only.pem", dns_only_key=d / "dns-only.key", client_cert=d / "client.pem",
                 client_key=d / "client.key", other_ca=d / "other-ca.pem", other_cert=d / "other.pem",
                 other_key=d / "other.key")
