"""clients/security.py without a cluster: Java properties syntax, the settings of each protocol and
mechanism, PEM stores, and one-line refusals that name the property and never a password."""

from __future__ import annotations

import ssl
import subprocess

import pytest

from clients.security import Secret, client_settings, command_config, parse_properties
from problems import ProblemError
from support.kafka_support import run_cli

SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"


def test_java_properties_syntax():
    text = (
        "# comment\n"
        "  ! another = comment\n"
        "\n"
        "a=1\n"
        "b : 2\n"
        "c 3\n"
        "d\t=\t  spaced value  \n"
        "e=first \\\n"
        "    second\\\n"
        "\tthird\n"
        "f=ends in a backslash \\\\\n"
        "g\\ key\\:x=\\t\\u0041\\n\\q\n"
        "h=\\uD83D\\uDE00\r\n"
        "i=last\rj\n"
        "a=again\n"
        "# a comment line is not continued \\\n"
        "k=x\n"
    )
    assert parse_properties(text) == {
        "a": "again",
        "b": "2",
        "c": "3",
        "d": "spaced value  ",
        "e": "first secondthird",
        "f": "ends in a backslash \\",
        "g key:x": "\tA\nq",
        "h": "\U0001f600",
        "i": "last",
        "j": "",
        "k": "x",
    }
    with pytest.raises(ProblemError, match=r"^f.properties: line 2: malformed \\uXXXX escape$"):
        parse_properties("x=1\npassword=s\\u12g4cret\n", "f.properties")


def _jaas(module: str = SCRAM, password: str = "p4ss") -> str:
    return f'{module} required username="alice" password="{password}";'


def test_settings_of_each_protocol_and_mechanism():
    assert client_settings({}) == {"security_protocol": "PLAINTEXT"}
    for mechanism, module in (("PLAIN", PLAIN), ("SCRAM-SHA-256", SCRAM), ("SCRAM-SHA-512", SCRAM)):
        settings = client_settings(
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": mechanism,
                "sasl.jaas.config": _jaas(module, 'pa\\"ss word'),
                "client.id": "me",
            }
        )
        assert settings == {
            "security_protocol": "SASL_PLAINTEXT",
            "client_id": "me",
            "sasl_mechanism": mechanism,
            "sasl_plain_username": "alice",
            "sasl_plain_password": 'pa"ss word',
        }
        assert isinstance(settings["sasl_plain_password"], Secret)
        assert 'pa"ss' not in repr(settings)  # kafka-python logs its settings with repr
    tls = client_settings({"security.protocol": "SSL"})
    assert isinstance(tls["ssl_context"], ssl.SSLContext) and tls["ssl_context"].check_hostname
    unchecked = client_settings(
        {"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": ""}
    )
    assert unchecked["ssl_context"].check_hostname is False
    both = client_settings(
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "PLAIN",
            "sasl.jaas.config": _jaas(PLAIN),
        }
    )
    assert set(both) == {
        "security_protocol",
        "ssl_context",
        "sasl_mechanism",
        "sasl_plain_username",
        "sasl_plain_password",
    }


@pytest.fixture(scope="module")
def pem(tmp_path_factory):
    """A CA-less self-signed certificate and its key (encrypted with ``key-pass``), by openssl."""
    folder = tmp_path_factory.mktemp("pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]
        + ["-keyout", "key.pem", "-out", "cert.pem", "-days", "2", "-subj", "/CN=localhost"]
        + ["-passout", "pass:key-pass"],
        cwd=folder,
        check=True,
        capture_output=True,
    )
    return folder


def test_pem_trust_and_key_stores(pem, tmp_path):
    certificate = (pem / "cert.pem").read_text()
    key = (pem / "key.pem").read_text()
    (tmp_path / "keystore.pem").write_text(key + certificate)
    settings = client_settings(
        {
            "security.protocol": "SSL",
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(pem / "cert.pem"),
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(tmp_path / "keystore.pem"),
            "ssl.key.password": "key-pass",
        }
    )
    assert len(settings["ssl_context"].get_ca_certs()) == 1
    # inline, the line breaks lost to the properties' continuation lines (as Kafka's docs write them)
    inline = tmp_path / "inline.properties"
    flat = lambda text: " \\\n  ".join(text.strip().splitlines())  # noqa: E731
    inline.write_text(
        "security.protocol=SSL\n"
        f"ssl.truststore.certificates={flat(certificate)}\n"
        f"ssl.keystore.key={flat(key)}\n"
        f"ssl.keystore.certificate.chain={flat(certificate)}\n"
        "ssl.key.password=key-pass\n"
    )
    assert len(command_config(inline)["ssl_context"].get_ca_certs()) == 1
    with pytest.raises(ProblemError) as wrong:
        client_settings(
            {
                "security.protocol": "SSL",
                "ssl.keystore.location": str(tmp_path / "keystore.pem"),
                "ssl.key.password": "not-the-key-pass",
            },
            "c.properties",
        )
    assert str(wrong.value).startswith(
        "c.properties: ssl.keystore.location: cannot load the private key and certificate chain"
    )
    assert "not-the-key-pass" not in str(wrong.value)


def test_jks_and_pkcs12_are_refused_with_the_conversion(tmp_path):
    subprocess.run(
        ["keytool", "-genkeypair", "-alias", "k", "-keyalg", "EC", "-dname", "CN=x"]
        + ["-keystore", "store.jks", "-storetype", "JKS", "-storepass", "store-pass"],
        cwd=tmp_path,
        check=True,
        capture_output=True,
    )
    jks = str(tmp_path / "store.jks")
    with pytest.raises(ProblemError) as error:
        client_settings(
            {"security.protocol": "SSL", "ssl.truststore.location": jks}, "c.properties"
        )
    assert str(error.value) == (
        f"c.properties: ssl.truststore.location: {jks} is a JKS store; only PEM is read: run "
        f"`keytool -list -rfc -keystore {jks} > truststore.pem` and set ssl.truststore.type=PEM, "
        "ssl.truststore.location=truststore.pem"
    )
    with pytest.raises(ProblemError, match="keytool -importkeystore .*`openssl pkcs12"):
        client_settings({"security.protocol": "SSL", "ssl.keystore.location": jks})


@pytest.mark.parametrize(
    "properties, message",
    [
        ({"sasl.login.class": "x"}, "sasl.login.class: is not supported"),
        ({"p4ss": ""}, "has a line that is no Kafka property (not shown: it could be a secret)"),
        ({"security.protocol": "TLS"}, "security.protocol: 'TLS' is not one of"),
        (
            {"security.protocol": "SASL_SSL", "sasl.jaas.config": _jaas()},
            "sasl.mechanism: GSSAPI (Kafka's default) is not supported",
        ),
        (
            {"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"},
            "sasl.mechanism: OAUTHBEARER is not supported",
        ),
        (
            {
                "security.protocol": "SASL_SSL",
                "sasl.mechanism": "PLAIN",
                "sasl.jaas.config": _jaas(),
            },
            f"sasl.jaas.config: login module {SCRAM} does not do PLAIN",
        ),
        (
            {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN"},
            "sasl.jaas.config: missing",
        ),
        (
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "SCRAM-SHA-256",
                "sasl.jaas.config": f'{SCRAM} required username="a" password="p4ss',
            },
            "sasl.jaas.config: unterminated quoted value",
        ),
        (
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "SCRAM-SHA-256",
                "sasl.jaas.config": _jaas()[:-1] + " tokenauth=true;",
            },
            "sasl.jaas.config: login module option 'tokenauth' is not supported",
        ),
        (
            {"security.protocol": "SSL", "ssl.truststore.type": "BCFKS"},
            "ssl.truststore.type: 'BCFKS' is not supported",
        ),
    ],
)
def test_unsupported_is_one_line_naming_it(properties, message):
    with pytest.raises(ProblemError) as error:
        client_settings(properties, "client.properties")
    assert str(error.value).startswith(f"client.properties: {message}")
    assert "p4ss" not in str(error.value)


def test_command_line_errors_exit_2(tmp_path, capsys):
    config = tmp_path / "client.properties"
    config.write_text("security.protocol=SASL_SSL\nsasl.mechanism=GSSAPI\n")
    status, out, err = run_cli(
        capsys,
        "lags",
        "--bootstrap-server",
        "127.0.0.1:9",
        "--command-config",
        str(config),
        "--group",
        "g",
    )
    assert status == 2 and out == ""
    assert (
        err == f"error: {config}: sasl.mechanism: GSSAPI is not supported "
        "(supported: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)\n"
    )
    status, _, err = run_cli(
        capsys,
        "assign",
        "--strategy",
        "range",
        "examples/group/kip-54-three-consumers.json",
        "--command-config",
        str(config),
    )
    assert (
        status == 2 and err == f"error: {config}: --command-config: only with --bootstrap-server\n"
    )
    status, _, err = run_cli(
        capsys,
        "snapshot",
        "--bootstrap-server",
        "127.0.0.1:9",
        "--command-config",
        str(tmp_path / "none"),
        "--placement",
    )
    assert status == 2 and err.startswith(f"error: {tmp_path / 'none'}: cannot read:")
