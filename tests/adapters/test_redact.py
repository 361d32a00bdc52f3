"""Secret redaction (oya.scanning.redact): a positive and negative corpus of secrets in many forms.

The corpus lives in tests/secret_corpus.py. Each positive carries a canary; after redaction
it must be gone, the line count unchanged and the rest of the line intact.
"""

from __future__ import annotations

import pytest
from secret_corpus import B64, CANARY, NEGATIVES, PK_BEGIN, PK_END, POSITIVES, TOKENS, WORD_CANARY

from oya.scanning.redact import MARKER, credential_value, find_secrets, redact, redact_path, secret_name


@pytest.mark.parametrize(("form", "language", "text", "rule"), POSITIVES, ids=[p[0] for p in POSITIVES])
def test_secret_forms_are_redacted(form: str, language: str | None, text: str, rule: str) -> None:
    red = redact(text, language)
    low = red.text.lower()
    assert not [c for c in ("oyacanary", "oya-canary", WORD_CANARY.lower(), B64.lower()) if c in low], form
    assert MARKER.format(rule=rule) in red.text
    assert red.counts.get(rule, 0) >= 1
    assert red.text.count("\n") == text.count("\n")
    assert find_secrets(red.text, language) == []  # the marker is not itself a secret


@pytest.mark.parametrize(("rule", "token"), TOKENS, ids=[f"{r}-{t[:6]}" for r, t in TOKENS])
@pytest.mark.parametrize("template", ["x = '{}'\n", "value: {}\n", "see {} here\n"])
def test_provider_tokens_anywhere(rule: str, token: str, template: str) -> None:
    red = redact(template.format(token), "python")
    assert "OYACANARY" not in red.text
    assert red.counts == {rule: 1}


@pytest.mark.parametrize(("language", "line"), NEGATIVES)
def test_ordinary_code_is_left_alone(language: str, line: str) -> None:
    assert find_secrets(line + "\n", language) == []


def test_redaction_keeps_the_line_readable() -> None:
    red = redact(f'DB_PASSWORD = "{CANARY}"  # from the vault\n', "python")
    assert red.text == 'DB_PASSWORD = "«redacted:secret_assignment»"  # from the vault\n'


def test_a_private_key_keeps_its_line_count_and_armour() -> None:
    text = f"{PK_BEGIN}\nMIIE{CANARY}\nAAAA\n{PK_END}\n"
    red = redact(text, "text")
    assert red.text == f"{PK_BEGIN}\n«redacted:private_key»\n«redacted:private_key»\n{PK_END}\n"
    assert red.lines == 2 and red.counts == {"private_key": 1}


def test_counts_are_by_rule() -> None:
    text = f"password: {CANARY}\ntoken: {CANARY}2\ndsn: redis://:{CANARY}@cache\n"
    assert redact(text, "yaml").counts == {"secret_assignment": 2, "url_credentials": 1}


def test_code_needs_a_literal_config_does_not() -> None:
    assert find_secrets(f"password = {CANARY}\n", "python") == []  # a name in code
    assert len(find_secrets(f"password = {CANARY}\n", "ini")) == 1


def test_a_plain_comment_is_not_recognised() -> None:
    # Documented limit: prose cannot be told from a secret.
    assert find_secrets(f"# the prod password is {CANARY}\n", "python") == []


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("DB_PASSWORD", True),
        ("dbPassword", True),
        ("PGPASSWORD", True),
        ("spring.datasource.password", True),
        ("SECRET_KEY", True),
        ("secret_key_base", True),
        ("x-api-key", True),
        ("apiKey", True),
        ("auth", True),
        ("MYSQL_PWD", True),
        ("password_field", False),
        ("token_type", False),
        ("tokenizer", False),
        ("secretName", False),
        ("publicKey", False),
        ("aws_access_key_id", False),
        ("key", False),
        ("author", False),
        ("pw", True),
        ("DB_PW", True),
        ("tls.key", True),
        (".dockerconfigjson", True),
        ("tls.crt", False),
        ("pwned", False),
        ("THE_" * 30 + "PASSWORD", True),  # over 80 characters
    ],
)
def test_secret_names(name: str, expected: bool) -> None:
    assert secret_name(name) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (CANARY, True),
        (WORD_CANARY, True),
        ("hunter2hunter2", True),
        ("p@ss-W0rd", True),
        ("client", False),
        ("aaaaaaaaaaaa", False),
        ("settings.SECRET_KEY", False),
        ("<your-key>", False),
        ("12345678", False),
        ("/etc/secret", False),
        ("«redacted:jwt»", False),
        # a template is a placeholder; text around its references may still be a secret
        ("${DB_PASSWORD}", False),
        ("$DB_PASSWORD", False),
        ("$dbPassword", False),
        ("%(password)s", False),
        ("{{password}}", False),
        ("<password>", False),
        ("${PREFIX}-secret-${ENV}", False),
        ("{0}-{1:015d}", False),
        ("${UNCLOSED", False),
        ("Abc%d9xYz!", True),
        ("pa{9}ss8Word", True),
        ("<b>Tr0ub4dor&3", True),
        ("$up3rS3cretPass", True),
        ("pa$$w0rd99", True),
        ("$2b$12$" + "KIXq8Zr0abcdefghijklmn", True),  # a bcrypt hash of a password
    ],
)
def test_credential_values(value: str, expected: bool) -> None:
    assert credential_value(value, quoted=True) is expected


def test_a_key_header_without_its_end_takes_only_the_base64_lines() -> None:
    text = f"x = 1\n{PK_BEGIN}\nMIIE{CANARY}\nAAAA==\n\nprint('after')\n"
    red = redact(text, "python")
    assert (
        red.text == f"x = 1\n{PK_BEGIN}\n«redacted:private_key»\n«redacted:private_key»\n\nprint('after')\n"
    )
    prose = f"Files that start with {PK_BEGIN} are skipped.\nThe rest is indexed.\n"
    assert redact(prose, "markdown").text == prose


@pytest.mark.parametrize(
    ("language", "template"),
    [
        ("yaml", "private_key: {}\n"),
        ("python", 'SECRET = "{}"\n'),
        ("shell", "curl -H 'Authorization: Bearer {}'\n"),
    ],
)
def test_a_long_value_is_redacted_whole(language: str, template: str) -> None:
    value = ("Ab1+" * 2000) + CANARY  # 8k characters, canary at the very end
    red = redact(template.format(value), language)
    assert "OYACANARY" not in red.text and "Ab1+" not in red.text


def test_a_tls_secret_keeps_its_certificate_and_loses_its_key() -> None:
    text = f"kind: Secret\ntype: kubernetes.io/tls\ndata:\n  tls.crt: LS0tLS1CRUdJTg==\n  tls.key: {B64}\n"
    red = redact(text, "yaml")
    assert "tls.crt: LS0tLS1CRUdJTg==\n" in red.text and "tls.key: «redacted:secret_assignment»\n" in red.text


def test_a_putty_key_loses_its_private_lines_only() -> None:
    text = "PuTTY-User-Key-File-2: ssh-rsa\nPublic-Lines: 1\nAAAAB3Nza\nPrivate-Lines: 2\nAAAA\nBBBB\nPrivate-MAC: 0f\n"
    red = redact(text, "text")
    assert red.text == text.replace("AAAA\nBBBB", "«redacted:private_key»\n«redacted:private_key»")


def test_a_secret_inside_an_unquoted_value_is_found_without_quadratic_cost() -> None:
    # the search goes on inside an innocent name's unquoted value, but reads it once
    text = "pw " + "a=" * 200_000 + f'password="{CANARY}"\n'
    assert [f.rule for f in find_secrets(text, "python")] == ["secret_assignment"]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("gh" + "p_" + CANARY + "0123456789abcdefghijklmnopq.txt", "«redacted:github_token».txt"),
        ("backup_" + "AK" + "IA" + "OYACANARY1234567.json", "backup_«redacted:aws_access_key_id».json"),
        ("keys/" + "sk" + "-live-" + CANARY + "0123456789abcdefghij/x.py", "keys/«redacted:openai_key»/x.py"),
        ("oya/scanning/redact.py", "oya/scanning/redact.py"),
        ("docs/AKIA_rotation.md", "docs/AKIA_rotation.md"),
    ],
)
def test_a_token_in_a_path_is_masked(path: str, expected: str) -> None:
    assert redact_path(path).text == expected
    assert bool(redact_path(path).counts) is (path != expected)
