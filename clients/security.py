"""Kafka's client properties (``--command-config FILE``) as kafka-python's connection settings.

Details: docs/live-clusters.md.
"""

from __future__ import annotations

import logging
import os
import re
import ssl
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from problems import ProblemError

#: ``security.protocol`` values (Kafka's names; kafka-python takes the same).
PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
#: The SASL mechanisms, each with the JAAS login module Kafka's clients configure it with.
MECHANISMS = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}
#: The properties understood; any other one is refused (by name).
PROPERTIES = (
    "security.protocol",
    "client.id",
    "sasl.mechanism",
    "sasl.jaas.config",
    "ssl.endpoint.identification.algorithm",
    "ssl.truststore.type",
    "ssl.truststore.location",
    "ssl.truststore.password",
    "ssl.truststore.certificates",
    "ssl.keystore.type",
    "ssl.keystore.location",
    "ssl.keystore.password",
    "ssl.key.password",
    "ssl.keystore.key",
    "ssl.keystore.certificate.chain",
)
_WHITESPACE = " \t\f"
_NAME = re.compile(r"[a-z][a-z0-9-]*(\.[a-z0-9-]+)+")  # the shape of Kafka's property names
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_PEM = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \1-----", re.S)


class Secret(str):
    """A password: the string itself, shown as ``'******'`` by ``repr`` (kafka-python logs its
    settings with ``repr`` at debug level)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "'******'"


class _Redact(logging.Filter):
    """Replaces the passwords of :data:`_SECRETS` in kafka-python's log records by ``******``
    (at debug level it logs the bytes it sends: SASL PLAIN's carry the password)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = message
        for secret in _SECRETS:
            for form in {secret, repr(secret.encode())[2:-1]}:
                redacted = redacted.replace(form, "******")
        if redacted != message:
            record.msg, record.args = redacted, ()
        return True


_SECRETS: set[str] = set()
_REDACT = _Redact()


def secret(password: str) -> Secret:
    """``password`` as a :class:`Secret`, also left out of kafka-python's log from now on."""
    import kafka.admin  # noqa: F401 - kafka-python's modules create their loggers on import
    import kafka.consumer  # noqa: F401
    import kafka.producer  # noqa: F401

    if password:
        _SECRETS.add(str(password))
    for name in list(logging.Logger.manager.loggerDict):
        if name == "kafka" or name.startswith("kafka."):
            logger = logging.getLogger(name)
            if _REDACT not in logger.filters:
                logger.addFilter(_REDACT)
    return Secret(password)


# ------------------------------------------------------------- properties
def parse_properties(text: str, source: str = "<properties>") -> dict[str, str]:
    """``text`` read as ``java.util.Properties.load`` reads it.

    Comment lines start with ``#`` or ``!``; a line ending in an odd number of backslashes continues
    on the next (its leading whitespace dropped); the key ends at the first unescaped ``=``, ``:`` or
    whitespace; escapes ``\\t \\n \\r \\f \\uXXXX`` and ``\\X`` (``X`` itself) in keys and values; the last
    of repeated keys wins.  A malformed ``\\uXXXX`` is a :class:`ProblemError` naming the line (never
    the value: it may be a password).
    """
    out: dict[str, str] = {}
    lines = re.split(r"\r\n|\r|\n", text)
    index = 0
    while index < len(lines):
        number = index + 1
        line = lines[index].lstrip(_WHITESPACE)
        index += 1
        if not line or line[0] in "#!":
            continue
        while _continues(line):
            line = line[:-1]
            if index == len(lines):
                break
            line += lines[index].lstrip(_WHITESPACE)
            index += 1
        key, value = _split(line)
        out[_unescape(key, number, source)] = _unescape(value, number, source)
    return out


def _continues(line: str) -> bool:
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def _split(line: str) -> tuple[str, str]:
    """The raw key and value of one logical line."""
    escaped = False
    for position, char in enumerate(line):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in "=:":
            return line[:position], line[position + 1 :].lstrip(_WHITESPACE)
        elif char in _WHITESPACE:
            rest = line[position:].lstrip(_WHITESPACE)
            if rest[:1] in ("=", ":"):
                rest = rest[1:].lstrip(_WHITESPACE)
            return line[:position], rest
    return line, ""


def _unescape(text: str, number: int, source: str) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    position = 0
    while position < len(text):
        char = text[position]
        position += 1
        if char != "\\":
            out.append(char)
            continue
        if position == len(text):
            break
        char = text[position]
        position += 1
        if char == "u":
            digits = text[position : position + 4]
            if not re.fullmatch(r"[0-9a-fA-F]{4}", digits):
                raise ProblemError(f"line {number}", "malformed \\uXXXX escape", source)
            out.append(chr(int(digits, 16)))
            position += 4
        else:
            out.append(_ESCAPES.get(char, char))
    # \uD83D\uDE00 is one character to Java: join surrogate pairs
    return "".join(out).encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def read_properties(path: str | os.PathLike[str]) -> dict[str, str]:
    """The properties of the file ``path`` (ISO 8859-1, as ``Properties.load`` reads a stream)."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise ProblemError("", f"cannot read: {error.strerror or error}", str(path)) from None
    return parse_properties(data.decode("latin-1"), str(path))


# --------------------------------------------------------------- settings
def command_config(path: str | os.PathLike[str] | None) -> dict[str, Any]:
    """kafka-python's connection settings of the client properties file ``path`` (``{}``: none)."""
    if path is None:
        return {}
    return client_settings(read_properties(path), str(path))


def client_settings(properties: Mapping[str, str], source: str = "<properties>") -> dict[str, Any]:
    """kafka-python's connection settings (``security_protocol``, ``ssl_context``,
    ``sasl_mechanism``, ``sasl_plain_username``, ``sasl_plain_password``, ``client_id``) of Kafka's
    client ``properties``.

    Raises
    ------
    ProblemError
        A property or value this does not support, or a certificate or key it cannot load; the
        message names the property (and ``source``), never a password.
    """
    for name in properties:
        if name not in PROPERTIES and not _NAME.fullmatch(name):
            raise ProblemError(
                "",
                "has a line that is no Kafka property (not shown: it could be a secret)",
                source,
            )
        if name not in PROPERTIES:
            raise ProblemError(
                name,
                "is not supported (supported: security.protocol, client.id, sasl.mechanism, "
                "sasl.jaas.config, ssl.* of PEM trust and key stores)",
                source,
            )
    protocol = properties.get("security.protocol", "PLAINTEXT").strip().upper()
    if protocol not in PROTOCOLS:
        raise ProblemError(
            "security.protocol",
            f"{protocol!r} is not one of {', '.join(PROTOCOLS)}",
            source,
        )
    settings: dict[str, Any] = {"security_protocol": protocol}
    if "client.id" in properties:
        settings["client_id"] = properties["client.id"]
    if protocol in ("SSL", "SASL_SSL"):
        settings["ssl_context"] = ssl_context(properties, source)
    if protocol.startswith("SASL_"):
        settings.update(_sasl(properties, source))
    return settings


def _sasl(properties: Mapping[str, str], source: str) -> dict[str, Any]:
    mechanism = properties.get("sasl.mechanism", "").strip() or "GSSAPI"
    if mechanism not in MECHANISMS:
        default = " (Kafka's default)" if "sasl.mechanism" not in properties else ""
        raise ProblemError(
            "sasl.mechanism",
            f"{mechanism}{default} is not supported (supported: {', '.join(MECHANISMS)})",
            source,
        )
    if "sasl.jaas.config" not in properties:
        raise ProblemError(
            "sasl.jaas.config",
            f'missing (for {mechanism}: {MECHANISMS[mechanism]} required username="..." '
            'password="...";)',
            source,
        )
    module, options = parse_jaas(properties["sasl.jaas.config"], source)
    if module != MECHANISMS[mechanism]:
        raise ProblemError(
            "sasl.jaas.config",
            f"login module {module} does not do {mechanism} (use {MECHANISMS[mechanism]})",
            source,
        )
    for option in options:
        if option not in ("username", "password"):
            raise ProblemError(
                "sasl.jaas.config", f"login module option {option!r} is not supported", source
            )
    for option in ("username", "password"):
        if option not in options:
            raise ProblemError(
                "sasl.jaas.config", f"the login module has no {option}= option", source
            )
    return {
        "sasl_mechanism": mechanism,
        "sasl_plain_username": options["username"],
        "sasl_plain_password": secret(options["password"]),
    }


_JAAS_TOKEN = re.compile(r'\s*(?:"((?:[^"\\]|\\.)*)"|([=;])|([^\s=;"]+))', re.S)


def parse_jaas(text: str, source: str = "<properties>") -> tuple[str, dict[str, str]]:
    """``(login module class, {option: value})`` of a one-module ``sasl.jaas.config``:
    ``CLASS FLAG [name=value ...];``, values bare words or double-quoted (``\\"`` and ``\\\\``
    escapes).  A malformed text is a :class:`ProblemError` that shows none of it."""
    tokens: list[tuple[str, str]] = []  # (kind, text): kind "q" quoted, "p" punctuation, "w" word
    position = 0
    while text[position:].strip():
        match = _JAAS_TOKEN.match(text, position)
        if match is None:
            raise ProblemError("sasl.jaas.config", "unterminated quoted value", source)
        quoted, punctuation, word = match.groups()
        if quoted is not None:
            tokens.append(("q", re.sub(r"\\(.)", r"\1", quoted, flags=re.S)))
        elif punctuation is not None:
            tokens.append(("p", punctuation))
        else:
            tokens.append(("w", word))
        position = match.end()
    shape = 'CLASS required username="..." password="...";'
    if len(tokens) < 3 or tokens[0][0] != "w" or tokens[1][0] != "w" or tokens[-1] != ("p", ";"):
        raise ProblemError("sasl.jaas.config", f"is not one login module ({shape})", source)
    module, flag = tokens[0][1], tokens[1][1]
    if flag not in ("required", "requisite", "sufficient", "optional"):
        raise ProblemError(
            "sasl.jaas.config", f"the login module's flag is not required ({shape})", source
        )
    options: dict[str, str] = {}
    body = tokens[2:-1]
    if len(body) % 3 or any(
        name[0] != "w" or equals != ("p", "=") or value[0] == "p"
        for name, equals, value in zip(body[0::3], body[1::3], body[2::3])
    ):
        raise ProblemError(
            "sasl.jaas.config",
            f"has more than one login module or an option that is not name=value ({shape})",
            source,
        )
    for name, _, value in zip(body[0::3], body[1::3], body[2::3]):
        options[name[1]] = value[1]
    return module, options


# -------------------------------------------------------------------- TLS
def ssl_context(properties: Mapping[str, str], source: str = "<properties>") -> ssl.SSLContext:
    """The TLS context of the ``ssl.*`` properties: the trusted certificates (PEM; the system's
    when none are given), the client's key and certificate chain (PEM; for mutual TLS), host name
    verification unless ``ssl.endpoint.identification.algorithm`` is empty."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    algorithm = properties.get("ssl.endpoint.identification.algorithm", "https").strip()
    if algorithm.lower() not in ("https", ""):
        raise ProblemError(
            "ssl.endpoint.identification.algorithm",
            f"{algorithm!r} is not supported (https, or empty: no host name check)",
            source,
        )
    context.check_hostname = bool(algorithm)
    trusted = _pem_store(properties, "truststore", source)
    if trusted is None:
        context.load_default_certs()
    else:
        certificates = [
            _normal_pem(m.group(1), m.group(2))
            for m in _pem_blocks(trusted)
            if m.group(1) == "CERTIFICATE"
        ]
        if not certificates:
            raise ProblemError(
                _store_field(properties, "truststore"), "has no PEM certificate", source
            )
        try:
            context.load_verify_locations(cadata="\n".join(certificates))
        except (ssl.SSLError, ValueError) as error:
            raise ProblemError(
                _store_field(properties, "truststore"),
                f"cannot load its certificates ({_reason(error)})",
                source,
            ) from None
    key_store = _pem_store(properties, "keystore", source)
    if key_store is not None:
        _load_key(context, properties, key_store, source)
    return context


def _store_field(properties: Mapping[str, str], store: str) -> str:
    inline = "ssl.truststore.certificates" if store == "truststore" else "ssl.keystore.key"
    return inline if inline in properties else f"ssl.{store}.location"


def _pem_store(properties: Mapping[str, str], store: str, source: str) -> str | None:
    """The PEM text of the trust or key store (``store``), inline or from its file; ``None``
    when not given.  A JKS or PKCS12 file is refused with the command that converts it."""
    kind = properties.get(f"ssl.{store}.type", "").strip().upper()
    if kind not in ("", "PEM", "JKS", "PKCS12"):
        raise ProblemError(f"ssl.{store}.type", f"{kind!r} is not supported (PEM)", source)
    if store == "truststore" and "ssl.truststore.certificates" in properties:
        return properties["ssl.truststore.certificates"]
    if store == "keystore" and "ssl.keystore.key" in properties:
        return (
            properties["ssl.keystore.key"]
            + "\n"
            + properties.get("ssl.keystore.certificate.chain", "")
        )
    location = properties.get(f"ssl.{store}.location", "").strip()
    if not location:
        return None
    try:
        data = Path(location).read_bytes()
    except OSError as error:
        raise ProblemError(
            f"ssl.{store}.location",
            f"cannot read {location}: {error.strerror or error}",
            source,
        ) from None
    if b"-----BEGIN " in data:
        return data.decode("latin-1")
    if kind == "PEM":
        raise ProblemError(f"ssl.{store}.location", f"{location} is not PEM", source)
    raise ProblemError(
        f"ssl.{store}.location",
        f"{location} is a {'PKCS12' if data[:1] == b'0' else kind or 'JKS'} store; "
        f"only PEM is read: {_conversion(store, location, kind, data)}",
        source,
    )


def _conversion(store: str, location: str, kind: str, data: bytes) -> str:
    """The commands that convert a JKS or PKCS12 store to PEM, and the properties to set then."""
    pkcs12 = data[:1] == b"0" or kind == "PKCS12"
    if store == "truststore":
        return (
            f"run `keytool -list -rfc -keystore {location} > truststore.pem` and set "
            "ssl.truststore.type=PEM, ssl.truststore.location=truststore.pem"
        )
    to_pkcs12 = (
        ""
        if pkcs12
        else f"`keytool -importkeystore -srckeystore {location} -destkeystore keystore.p12 "
        "-deststoretype PKCS12`, then "
    )
    return (
        f"run {to_pkcs12}`openssl pkcs12 -in {'keystore.p12' if not pkcs12 else location} "
        "-out keystore.pem` and set ssl.keystore.type=PEM, ssl.keystore.location=keystore.pem, "
        "ssl.key.password=(the PEM pass phrase)"
    )


def _pem_blocks(text: str) -> Iterator[re.Match[str]]:
    return _PEM.finditer(text)


def _normal_pem(kind: str, body: str) -> str:
    """A PEM block with its base64 re-wrapped (properties values often lose the line breaks)."""
    headers, _, data = body.rpartition("\n\n") if "Proc-Type" in body else ("", "", body)
    data = re.sub(r"\s+", "", data)
    lines = [data[i : i + 64] for i in range(0, len(data), 64)]
    head = [headers.strip(), ""] if headers else []
    return "\n".join([f"-----BEGIN {kind}-----", *head, *lines, f"-----END {kind}-----", ""])


def _load_key(
    context: ssl.SSLContext, properties: Mapping[str, str], text: str, source: str
) -> None:
    field = _store_field(properties, "keystore")
    blocks = [(m.group(1), m.group(2)) for m in _pem_blocks(text)]
    keys = [_normal_pem(k, b) for k, b in blocks if k.endswith("PRIVATE KEY")]
    chain = [_normal_pem(k, b) for k, b in blocks if k == "CERTIFICATE"]
    if len(keys) != 1 or not chain:
        raise ProblemError(field, "needs one PEM private key and its certificate chain", source)
    password = properties.get("ssl.key.password", properties.get("ssl.keystore.password", ""))
    with tempfile.TemporaryDirectory(prefix="rebalance-lab-key-") as folder:
        path = Path(folder) / "key.pem"
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write("".join(keys + chain))
        try:
            # A password is always given: OpenSSL would otherwise ask for one on the terminal.
            context.load_cert_chain(str(path), password=password)
        except (ssl.SSLError, ValueError) as error:
            raise ProblemError(
                field,
                f"cannot load the private key and certificate chain ({_reason(error)}; "
                "a wrong or missing ssl.key.password?)",
                source,
            ) from None


def _reason(error: Exception) -> str:
    return str(getattr(error, "reason", None) or type(error).__name__)
