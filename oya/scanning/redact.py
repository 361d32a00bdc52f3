"""Find secrets in a file's text and replace their values with a marker before anything is indexed.

Theory of operation:

* Kinds of rule, each naming what it found (the name is what the build report counts):
  provider tokens (one literal-prefixed pattern each: AWS key ids, GitHub, GitLab, Slack,
  Stripe, OpenAI, Anthropic, Google, Hugging Face, npm, PyPI, SendGrid, JWT ...), private key
  blocks (PEM, SSH2, PuTTY's private lines), credentials in URLs (``postgres://user:PASS@host``),
  Authorization header values (``Bearer ...``, ``Basic ...``), ``connection_string`` pairs
  (``;Password=x;``, ``?password=x``, libpq ``password=x`` in a string literal),
  ``command_line_password`` (``curl -u user:x``, ``mysql -px``, ``--password=x``), ``netrc``
  lines, and ``secret_assignment``: a value assigned to a secret-looking name in any syntax
  (YAML ``password: x``, INI ``password = x``, JSON, TOML, env files, ``export``, Dockerfile
  ``ENV``, ``--password x``, code ``api_key = "x"``, ``connect(host=h, pwd="x")``,
  ``os.environ.setdefault("API_KEY", "x")``, ``env["TOKEN"] = "x"``, a Kubernetes Secret's
  ``tls.key``).
* The rules are data in ``oya/scanning/secret_rules.py``: token patterns after gitleaks' rule set (MIT)
  and detect-secrets' plugins (Apache-2.0), names after detect-secrets' keyword plugin. Neither
  library runs
  here: detect-secrets scans 20–50 s per 100k lines, far too slow for every build
  (bench/secret_bench.py measures both).
* Speed. Python's regex engine scans fast only for a literal prefix, so each token pattern
  starts with a literal, and the assignment and header rules look only at lines that hold
  one of a few keywords (found with ``str.find`` on the lower-cased text).
* Values, not names. An assignment counts only when the value is a literal that could be a
  credential: at least six characters, not a placeholder (``changeme``, ``<your-key>``,
  ``${VAR}``, ``{{ x }}``, ``$VAR``: a value that is only template references; what is left
  around them is judged alone, so ``"Abc%d9xYz!"`` and ``"$up3rS3cret"`` are secrets), a path,
  a bool, a regex, markup (``"</s>"``) or a colour, and of
  some randomness: letters mixed with digits or symbols, or else varied letters (Shannon
  entropy). In code only quoted literals count (``password = request.form["password"]`` is an
  expression) and a name-shaped or lower-case word is a name (``"password_confirm"``,
  ``"downgrades"``); in data formats (YAML, INI, TOML, JSON, env, and an environment
  variable's value in code) any varied value counts, quoted or not; in documents an unquoted
  value counts too.
* Redaction replaces the value only, with ``«redacted:RULE»``, so the line stays readable
  and every line keeps its number (spans and citations stay valid). A file's path gets the
  token rules alone (``redact_path``): a file named like a token is skipped under that form.
* What cannot work: a secret in prose or in a plain comment (``# the prod password is
  hunter2``), a random string under an innocent name (``X = "a8f3..."``), a passphrase with
  spaces, a value split across lines or built at run time.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import re
from collections import Counter
from dataclasses import dataclass

from oya.scanning.secret_rules import (
    EXACT_NAMES,
    KEY_QUALIFIERS,
    KEYWORDS,
    NAME_NOT_SECRET,
    NOT_SECRET_VALUES,
    PLACEHOLDER_PARTS,
    SECRET_DATA_KEYS,
    STRONG_ENDINGS,
    TOKEN_PATTERNS,
    TOKEN_PLACEHOLDERS,
    URL_PLACEHOLDERS,
)

__all__ = ["Finding", "Redaction", "find_secrets", "redact", "redact_path", "MARKER"]

MARKER = "«redacted:{rule}»"

# Data formats: a value under a secret-looking name is data, even when it looks like a name
# ("password: super-secret-value"); in code and documents such a literal is usually a name.
_DATA_LANGUAGES = frozenset({"yaml", "ini", "toml", "json", "shell", "makefile", "dockerfile", None})
# Languages whose unquoted values are data, not expressions.
_CONFIG_LANGUAGES = (_DATA_LANGUAGES - {"json"}) | {"markdown", "rst", "text", "sql"}


@dataclass(frozen=True, slots=True)
class Finding:
    """A secret value at ``text[start:end]``, found by ``rule``."""

    rule: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Redaction:
    text: str
    counts: dict[str, int]  # rule -> values replaced
    lines: int  # lines that held at least one secret


# --- provider tokens --------------------------------------------------------------------

_TOKEN_RULES = tuple((name, re.compile(rx), bounded) for name, rx, bounded in TOKEN_PATTERNS)
# PEM armour (five dashes, no space) and SSH2 (four dashes and a space: "---- BEGIN SSH2 ...")
_PRIVATE_KEY_RE = re.compile(
    r"-----BEGIN[ A-Z0-9]{0,40} PRIVATE KEY(?: BLOCK)?-----|---- BEGIN[ A-Z0-9]{0,40} PRIVATE KEY ----"
)
_KEY_END_RE = re.compile(r"-----END|---- END")
# A PuTTY key file (PuTTY-User-Key-File-2/3) says how many base64 lines its private part has.
_PUTTY_RE = re.compile(r"Private-Lines:[ \t]*(?P<n>[0-9]{1,4})[ \t]*\n")
_BASE64_LINE_RE = re.compile(r"[ \t]*[A-Za-z0-9+/=]+[ \t]*")
_MARKER_ONLY_RE = re.compile(r"(?:\s|«redacted:\w+»|\\n)*")


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


_MAX_KEY_CHARS = 20_000  # a 16k-bit RSA key is about 12k characters of base64
# base64 (maybe quoted, maybe with "\n" escapes) or an armour header ("Proc-Type: 4,ENCRYPTED")
_ARMOUR_LINE_RE = re.compile(r"[ \t]*(?:[A-Za-z0-9+/=,\"'\\-]|: )*[ \t]*")


def _armour_end(text: str, start: int) -> int:
    """Where the base64 lines after a key header stop (a header quoted in prose has none)."""
    pos = text.find("\n", start)
    if _ARMOUR_LINE_RE.fullmatch(text, start, len(text) if pos < 0 else pos) is None:
        return start  # the header's own line goes on with prose
    while pos >= 0 and pos - start < _MAX_KEY_CHARS:
        nxt = text.find("\n", pos + 1)
        line_end = len(text) if nxt < 0 else nxt
        if not text[pos + 1 : line_end].strip() or _ARMOUR_LINE_RE.fullmatch(text, pos + 1, line_end) is None:
            return pos
        pos = nxt
    return len(text) if pos < 0 else pos


def _putty_findings(text: str) -> list[Finding]:
    """The private lines of a PuTTY key: as many base64 lines as its ``Private-Lines:`` says."""
    out = []
    for m in _PUTTY_RE.finditer(text):
        start = end = m.end()
        for _ in range(min(int(m.group("n")), _MAX_KEY_CHARS // 64)):
            nxt = text.find("\n", end)
            line_end = len(text) if nxt < 0 else nxt
            if _BASE64_LINE_RE.fullmatch(text, end, line_end) is None:
                break
            end = line_end if nxt < 0 else nxt + 1
        if end > start:
            out.append(Finding("private_key", start, end - (text[end - 1] == "\n")))
    return out


def _token_findings(text: str, *, in_path: bool = False) -> list[Finding]:
    out: list[Finding] = []
    body_end = 0
    ends: list[int] | None = None  # every "-----END", found once: a hostile file may have many headers
    for m in _PRIVATE_KEY_RE.finditer(text):
        if m.start() < body_end:
            continue  # inside the previous key's body
        if ends is None:
            ends = [e.start() for e in _KEY_END_RE.finditer(text)]
        i = bisect.bisect_left(ends, m.end())
        if i < len(ends) and ends[i] - m.end() <= _MAX_KEY_CHARS:
            body_end = ends[i]
        else:  # no END: the body is the base64-looking lines that follow
            body_end = _armour_end(text, m.end())
        body = text[m.end() : body_end]
        if body.strip() and _MARKER_ONLY_RE.fullmatch(body) is None:
            out.append(Finding("private_key", m.end(), body_end))
    out += _putty_findings(text)
    for rule, rx, bounded in _TOKEN_RULES:
        for m in rx.finditer(text):
            start = m.start()
            before = text[start - 1] if start else " "
            # in a file name "_" separates words too: backup_AKIA....json
            if bounded and (before.isalnum() if in_path else _is_word_char(before)):
                continue
            low = m.group().lower()
            if not any(word in low for word in TOKEN_PLACEHOLDERS):
                out.append(Finding(rule, start, m.end()))
    return out


# --- credentials in URLs ----------------------------------------------------------------

_URL_CREDENTIALS_RE = re.compile(
    r"://(?P<user>[^\s:/?#@'\"<>`]{0,64}):(?P<pw>[^\s/?#@'\"<>`]{1,1000})@(?=[\w\[])"
)


def _url_findings(text: str) -> list[Finding]:
    out = []
    for m in _URL_CREDENTIALS_RE.finditer(text):
        pw = m.group("pw")
        low = pw.lower()
        if low in URL_PLACEHOLDERS or "«" in pw or set(pw) <= {"*", "x", "X", "."}:
            continue
        if _is_template(pw) and not credential_value(pw, quoted=True):
            continue
        if pw == m.group("user"):
            continue  # a well-known default ("guest:guest", "postgres:postgres"), not a secret
        out.append(Finding("url_credentials", m.start("pw"), m.end("pw")))
    return out


# --- keyword lines: assignments and headers ---------------------------------------------

# only at the start of a name, and without backtracking into it: linear on a hostile 1 MB line.
# A leading dot for dotfile keys (".dockerconfigjson"); no length cap, so a long name is whole.
_NAME = r"(?<![\w.$@-])(?P<name>\.?[A-Za-z_$@][\w.$@-]*+)"
_QUOTED = r"""(?P<q>['"`])(?P<qv>(?:(?!(?P=q))[^\\\n]|\\.){1,20000})(?P=q)"""
# A name and its operator; the value is matched after it (_VALUE_RE), only for a secret name.
_ASSIGN_RE = re.compile(_NAME + r"(?P<close>['\"`]?\]?)[ \t]*(?P<op>:=|=>|==|!=|\|\|=|\?\?=|=|:|,)[ \t]*")
_VALUE_RE = re.compile(r"(?:[rbuRBU@]{0,2}" + _QUOTED + r"|(?P<bare>[^\s'\"`]++))")
_QUOTED_VALUE_RE = re.compile(r"[rbuRBU@]{0,2}" + _QUOTED)
# API_KEY: str = "...", const apiKey: string = "..." (a type between the name and the value)
_ANNOTATED_RE = re.compile(_NAME + r":[ \t]*[\w.\[\], |]{1,60}+=[ \t]*[rbuRBU@]{0,2}" + _QUOTED)
# #define API_KEY "..." (C, C++)
_DEFINE_RE = re.compile(r"#[ \t]*define[ \t]+" + _NAME + r"[ \t]+" + _QUOTED)
# ENV NAME value (Dockerfile), --password value (command lines)
_SPACED_RE = re.compile(
    r"(?:^|[ \t])(?:ENV[ \t]+|--)(?P<name>[\w.-]++)[ \t]+(?P<bare>[^\s'\"`=-][^\s'\"`]*)", re.MULTILINE
)
_HEADER_RE = re.compile(
    r"(?P<header>authorization['\"]?[ \t]*[:=,][ \t]*[rbuf]?['\"]?[ \t]*)?"
    r"\b(?:bearer|basic|token|digest)[ \t]+(?P<v>[A-Za-z0-9._~+/:-]{8,}+=*)(?![\w{$<])",
    re.IGNORECASE,
)

_PART_RE = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def _name_parts(name: str) -> list[str]:
    return [p.lower() for p in _PART_RE.findall(name.rsplit(".", 1)[-1].strip("$@"))]


@functools.lru_cache(maxsize=4096)  # a file repeats its names; a hostile one, thousands of times
def secret_name(name: str) -> bool:
    """True when an assigned name says its value is a credential (``DB_PASSWORD``, ``apiKey``,
    ``SECRET_KEY``, ``x-auth-token``), not when it names one (``password_field``, ``token_type``)."""
    if name.lower() in SECRET_DATA_KEYS:
        return True
    parts = _name_parts(name)
    if not parts or parts[-1] in NAME_NOT_SECRET or "public" in parts or "publishable" in parts:
        return False
    last = parts[-1]
    if len(parts) == 1 and last in EXACT_NAMES:
        return True
    if last in EXACT_NAMES and len(parts) > 1 and last != "auth":  # db_pass, mysql_pwd
        return True
    if last.endswith(STRONG_ENDINGS):
        return True
    earlier = set(parts[:-1])
    if last in {"key", "base", "value", "hash", "string", "str"} and earlier & (KEY_QUALIFIERS | {"secret"}):
        return True
    return last == "credentials" and len(parts) > 1


_IDENTIFIER_RE = re.compile(
    r"_*[A-Za-z][A-Za-z]*(?:[_.-]+[A-Za-z]+)+_*|[a-z]+(?:[A-Z][a-z]+)+|(?:[A-Z][a-z]+){2,}"
)
# a regular expression, not a credential: a class "[A-Z]", a group "(?", an escape "\d", a count "{2,}"
_REGEX_RE = re.compile(r"\[[^\]]+\]|\(\?|\\[dswbDSW.]|\{\d+,\d*\}")
# A reference a template fills in: ${VAR}, $(cmd), {{ var }}, {% tag %}, %(var)s, %s, {0},
# {name:>8}, <your-key>, markup (<b>, </b>), %VAR%, and $VAR shaped like a variable (DB_PASS,
# db_pass, dbPass, DbPass) at the start or after a separator ("$up3rS3cret" and "pa$$w0rd" are
# no variables). Bounded, so a hostile value cannot make it backtrack far.
_TEMPLATE_REF_RE = re.compile(
    r"\$\{[^{}]{0,200}\}|\$\([^()]{0,200}\)|\{\{[^{}]{0,200}\}\}|\{%[^{}]{0,200}%\}"
    r"|%\([\w.-]*\)[a-z]?|%[sdr]|\{[\w.\[\]]*(?:![rsa])?(?::[^{}'\"\s]*)?\}|</?[\w .-]*>|%[A-Za-z_]\w*%"
    r"|(?<![A-Za-z0-9$])\$(?:[A-Z_][A-Z0-9_]*|[a-z_][a-z0-9_]*|[A-Za-z][a-z]+(?:[A-Z][a-z0-9]*)+)\b"
)
# what joins a reference to the text around it ("${host}:_token", "${app}_secret_key")
_JOINERS = ":_-./@#,;| "
# what is left of a reference cut short: the value is a template whatever else it holds
_TEMPLATE_OPEN_RE = re.compile(r"\$\{|\{\{|\$\(|\{%|%\(")


def _is_template(value: str) -> bool:
    return _TEMPLATE_REF_RE.search(value) is not None or _TEMPLATE_OPEN_RE.search(value) is not None


def _literal_text(value: str) -> str | None:
    """``value`` without its template references, or None when one is left (cut short, or
    nested: one pass only, so a check of the result never strips again)."""
    if not any(ch in value for ch in "$%{<"):
        return value  # no reference can start here (the common case, tested in C)
    literal = _TEMPLATE_REF_RE.sub("", value)
    return None if _is_template(literal) else literal


def shannon_entropy(value: str) -> float:
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values()) if n else 0.0


_BRACKETS = frozenset("()[]{}<>")


_COLOUR_RE = re.compile(r"#[0-9a-fA-F]{3,8}")
_ESCAPES_RE = re.compile(r"(?:\\(?:u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|U[0-9a-fA-F]{8}|.))+")


def credential_value(value: str, *, quoted: bool, data: bool = False, value_quote: str = "") -> bool:
    """True when ``value`` (assigned to a secret-looking name) could be a real credential;
    ``data`` when it sits in a data format (YAML, INI, JSON ...), where names are values too."""
    if len(value) < 6 or "«" in value or any(ch.isspace() for ch in value):
        return False
    low = value.lower()
    if low in NOT_SECRET_VALUES or "redacted" in low or any(p in low for p in PLACEHOLDER_PARTS):
        return False
    literal = _literal_text(value)
    if literal != value:
        # A template is a placeholder, unless the text around its references is a credential
        # itself ("Abc%d9xYz!", "pa{9}ss8Word", "<b>Tr0ub4dor&3"), judged as code is: words and
        # names joined to references are names (`${regKey}:_authToken`, "${app}_secret_key").
        # That text has no reference left, so this recursion is one level deep.
        return literal is not None and credential_value(
            literal.strip(_JOINERS), quoted=quoted, value_quote=value_quote
        )
    if _REGEX_RE.search(value) or low.startswith(("/", "./", "../", "~/", "http://", "https://", "file:")):
        return False
    has_digit = _has_digit(value)
    if (value[0] in "<[" and value[-1] in ">]") or (
        not has_digit and not value[0].isalnum() and not value[-1].isalnum()
    ):
        return False  # markup or a sentinel: "</s>", "<|image_pad|>", "[MASK]", "|SPEAKER|", "__end__"
    if _ESCAPES_RE.fullmatch(value) or _COLOUR_RE.fullmatch(value):
        return False  # a character written as escapes ("\u0120"), a colour ("#f8f8f2")
    if (not quoted or value_quote == "`") and (value[0] in "!&*@%" or any(ch in _BRACKETS for ch in value)):
        return False  # a YAML tag or anchor, or an expression in a document's code sample
    if not data and _IDENTIFIER_RE.fullmatch(value) is not None:
        return False  # a name ("password_confirm", "settings.SECRET_KEY", "LlamaTokenizer")
    if value.replace(".", "").replace("_", "").isdigit() and (quoted or len(value) < 8):
        return False  # a number or a version
    # Random enough: letters mixed with digits or symbols; or letters (and separators) only,
    # long and varied, and in code not all lower case (that is a word: "downgrades").
    letters = value.replace("_", "").replace("-", "").replace(".", "")
    if any(ch.isalpha() for ch in value) and not letters.isalpha() and len(set(value)) >= 4:
        return True
    if data:  # a value in a data format is a value: only repetition makes it a non-secret
        return len(letters) >= 8 and shannon_entropy(letters) >= _MIN_ENTROPY_DATA
    return not letters.islower() and len(letters) >= 10 and shannon_entropy(letters) >= _MIN_ENTROPY


# bits per character: "aaaaaaaaaa" 0, "secretsecret" 2.3, "mysecretkey" 2.9, "OYASECRETMARKER" 3.1
_MIN_ENTROPY = 3.0
_MIN_ENTROPY_DATA = 2.5


def _line_bounds(text: str, low: str) -> list[tuple[int, int]]:
    """(start, end) of every line holding a keyword, in order, each once."""
    starts: set[int] = set()
    for word in KEYWORDS:
        i = low.find(word)
        while i >= 0:
            start = text.rfind("\n", 0, i) + 1
            starts.add(start)
            end = text.find("\n", i)
            i = low.find(word, len(text) if end < 0 else end)
    out = []
    for start in sorted(starts):
        end = text.find("\n", start)
        out.append((start, len(text) if end < 0 else end))
    return out


def _has_digit(value: str) -> bool:
    return any(ch.isdigit() for ch in value)


# What stands before a quoted name that makes it an environment (or settings) variable:
# os.environ["X"], ENV['X'], getenv("X", ...), setdefault("X", ...), Setenv("X", ...), define('X', ...)
_ENV_BEFORE_RE = re.compile(
    r"(?:(?:environ|ENV|env)[ \t]*\[|(?:getenv|setdefault|[Ss]etenv|putenv|define|fetch|env|environ\.get)[ \t]*\()"
    r"[ \t]*\Z"
)


def _env_variable(text: str, m: re.Match[str]) -> bool:
    """True when the matched name is a quoted environment variable name (see _ENV_BEFORE_RE)."""
    quote_at = m.start("name") - 1
    if not m.group("close") or quote_at < 0 or text[quote_at] != m.group("close")[0]:
        return False
    return _ENV_BEFORE_RE.search(text, max(0, quote_at - 40), quote_at) is not None


def _assignment_findings(text: str, line: tuple[int, int], language: str | None) -> list[Finding]:
    start, end = line
    config, data = language in _CONFIG_LANGUAGES, language in _DATA_LANGUAGES
    out = []
    pos = start
    # Not finditer: an unquoted value after an innocent name may hold the assignment that
    # matters (`conn = connect(host=db, password="...")`, `my %c = (pw => '...')`), so the
    # search goes on right after that name's operator. A quoted value is skipped, as is a
    # secret name's value whatever it is: every character is read at most twice.
    while (m := _ASSIGN_RE.search(text, pos, end)) is not None:
        pos = m.end()
        op = m.group("op")
        if not secret_name(m.group("name")) or (op == "," and not _env_variable(text, m)):
            # setdefault("PASSWORD", "x") is a name and its value; f("password", "x") is not
            if (q := _QUOTED_VALUE_RE.match(text, pos, end)) is not None:
                pos = q.end()
            continue
        v = _VALUE_RE.match(text, pos, end)
        if v is None:
            continue
        pos = v.end()
        env = op == "," or _env_variable(text, m)
        if v.group("qv") is not None:
            value = v.group("qv")
            if op in ("==", "!=") and not (_has_digit(value) and any(ch.isalpha() for ch in value)):
                continue  # a comparison with a sentinel: token == "NOTPROVIDED", token == "#bygroup"
            # an environment variable's value is data: setdefault("API_KEY", "..."), env["TOKEN"] = "..."
            if credential_value(value, quoted=True, data=data or env, value_quote=v.group("q")):
                out.append(Finding("secret_assignment", v.start("qv"), v.end("qv")))
        elif config and op in (":", "=", ":=") and v.group("bare"):
            bare = v.group("bare").rstrip(",;")
            if credential_value(bare, quoted=False, data=data):
                out.append(Finding("secret_assignment", v.start("bare"), v.start("bare") + len(bare)))
    for m in _SPACED_RE.finditer(text, start, end):
        if secret_name(m.group("name")) and credential_value(m.group("bare"), quoted=False, data=data):
            out.append(Finding("secret_assignment", m.start("bare"), m.end("bare")))
    for m in itertools.chain(_ANNOTATED_RE.finditer(text, start, end), _DEFINE_RE.finditer(text, start, end)):
        if secret_name(m.group("name")) and credential_value(m.group("qv"), quoted=True):
            out.append(Finding("secret_assignment", m.start("qv"), m.end("qv")))
    return out


def _header_findings(text: str, line: tuple[int, int]) -> list[Finding]:
    out = []
    for m in _HEADER_RE.finditer(text, *line):
        value = m.group("v")
        low = value.lower()
        if low in NOT_SECRET_VALUES or any(p in low for p in PLACEHOLDER_PARTS) or _is_template(value):
            continue
        if m.group("header"):  # "Authorization: Bearer x": whatever follows the scheme is the credential
            out.append(Finding("authorization_header", m.start("v"), m.end("v")))
        elif not _IDENTIFIER_RE.fullmatch(value) and (_has_digit(value) or shannon_entropy(value) >= 3.5):
            out.append(Finding("authorization_header", m.start("v"), m.end("v")))
    return out


# --- connection strings, command lines, netrc -------------------------------------------

# A key=value pair of a connection string or a URL's query: .NET "Server=db;Password=x;",
# JDBC "jdbc:mysql://h/db?user=x&password=x", libpq "host=db password=x". The value ends at a
# separator: a pair that goes on with anything else ("password=f(x)") is an expression.
_PAIR_RE = re.compile(
    r"(?:(?P<sep>[?&;])|(?<![^\s'\"`]))[ \t]*(?P<name>[A-Za-z][\w.-]*+)[ \t]*=(?![=>])[ \t]*"
    r"(?P<v>[^&#;\s'\"`<>()\[\]{},]++)(?=[&#;\s'\"`]|\Z)"
)
_STRING_RE = re.compile(_QUOTED)
# --password=x, --api-token=x, -Djavax.net.ssl.keyStorePassword=x
_FLAG_RE = re.compile(r"(?<![^\s'\"`])(?:--|-D)(?P<name>[A-Za-z][\w.-]*+)=(?P<v>[^\s'\"`]++)")
# curl -u user:pass, --user user:pass, --user=user:pass, ["curl", "-u", "user:pass"]
_USER_FLAG_RE = re.compile(  # the dash first: a literal prefix is what Python's regex engine scans fast
    r"-(?<![^\s'\"`]-)(?:u|-user)(?:=|['\"]?(?:[ \t]*+,)?[ \t]*+)['\"]?"
    r"(?P<user>[\w.@+-]{1,64}+):(?P<pw>[^\s'\"`/]++)"
)
# mysql -pPASS, mysqldump -p'PASS' (a bare "-p" asks for the password, "-P" is the port):
# the flag is found first (a literal), then the command before it on its line
_DASH_P_RE = re.compile(r"-p(?<=[ \t]-p)['\"]?(?P<pw>[^\s'\"`]++)")
_MYSQL_RE = re.compile(r"(?<![\w-])(?:mysql|mariadb)[\w-]*[ \t][^\n|;&]*\Z")
# netrc entries quoted in a document (machine, login, password, on one line or several)
_NETRC_RE = re.compile(
    r"machine(?<![\w-]machine)[ \t]++\S++(?:\s++(?:account|port)[ \t]++\S++)?\s++login[ \t]++\S++"
    r"(?:\s++(?:account|port)[ \t]++\S++)?\s++password[ \t]++['\"]?"
    r"(?P<v>[^\s'\"`]++)"
)


def _pair_findings(text: str, line: tuple[int, int], language: str | None) -> list[Finding]:
    """Secret pairs of connection strings and queries (in code inside string literals only: a
    loop's "for (;token=next;)" is no connection string), and ``--password=x`` flags."""
    in_code = language not in _CONFIG_LANGUAGES and language != "json"
    if in_code:
        segments = [(m.start("qv"), m.end("qv")) for m in _STRING_RE.finditer(text, *line)]
    else:
        segments = [line]
    out = []
    for start, end in segments:
        for m in _PAIR_RE.finditer(text, start, end):
            v_end = m.end("v")
            # after ? & ; or before ;, a pair; inside a literal, "host=db password=x" too
            paired = m.group("sep") or text.startswith(";", v_end) or in_code
            if paired and secret_name(m.group("name")) and credential_value(m.group("v"), quoted=True):
                out.append(Finding("connection_string", m.start("v"), v_end))
    for m in _FLAG_RE.finditer(text, *line):
        if secret_name(m.group("name")) and credential_value(m.group("v"), quoted=True):
            out.append(Finding("command_line_password", m.start("v"), m.end("v")))
    return out


def _command_line_findings(text: str) -> list[Finding]:
    """Passwords given to curl (-u user:pass) and mysql (-pPASS), and netrc lines."""
    out = []
    for m in _USER_FLAG_RE.finditer(text):
        pw = m.group("pw")
        if pw != m.group("user") and credential_value(pw, quoted=True):
            out.append(Finding("command_line_password", m.start("pw"), m.end("pw")))
    for m in _DASH_P_RE.finditer(text) if "mysql" in text or "mariadb" in text else ():
        before = max(text.rfind("\n", 0, m.start()) + 1, m.start() - 200)
        if _MYSQL_RE.search(text, before, m.start()) and credential_value(m.group("pw"), quoted=True):
            out.append(Finding("command_line_password", m.start("pw"), m.end("pw")))
    for m in _NETRC_RE.finditer(text):
        if credential_value(m.group("v"), quoted=True):  # a word ("forgotten") is prose
            out.append(Finding("netrc", m.start("v"), m.end("v")))
    return out


# --- entry points -----------------------------------------------------------------------


def find_credentials(text: str) -> list[Finding]:
    """The rules that need no language: provider tokens, private keys and passwords in URLs.

    For text that is no source file, such as a rendered page: there the language-aware
    assignment rules (``password = "..."`` in code, ``password: ...`` in data) would read
    highlighted, escaped code as data and flag the redactor's own negatives.
    """
    return sorted(_token_findings(text) + _url_findings(text), key=lambda f: (f.start, -f.end))


def find_secrets(text: str, language: str | None = None) -> list[Finding]:
    """Every secret value in ``text``, sorted by position, overlaps merged (first rule wins)."""
    low = text.lower()
    found = _token_findings(text) + _url_findings(text) + _command_line_findings(text)
    for line in _line_bounds(text, low):
        found += _assignment_findings(text, line, language)
        if "=" in text[line[0] : line[1]]:
            found += _pair_findings(text, line, language)
        if "auth" in low[line[0] : line[1]] or "bearer" in low[line[0] : line[1]]:
            found += _header_findings(text, line)
    return _merged(found)


def _merged(found: list[Finding]) -> list[Finding]:
    """``found`` sorted by position, overlaps merged (first rule wins)."""
    found = sorted(found, key=lambda f: (f.start, -f.end))
    merged: list[Finding] = []
    for f in found:
        if merged and f.start < merged[-1].end:
            last = merged[-1]
            if f.end > last.end:
                merged[-1] = Finding(last.rule, last.start, f.end)
            continue
        merged.append(f)
    return merged


def redact(text: str, language: str | None = None) -> Redaction:
    """``text`` with every secret value replaced by a marker; line count unchanged."""
    return _replaced(text, find_secrets(text, language))


def redact_path(path: str) -> Redaction:
    """A file's repository path with every token in it replaced by a marker: a file or folder
    named ``ghp_...`` or ``AKIA....json`` is skipped, and only this form of its path is kept
    (skip lists, the index, logs). The language-free rules only: names hold no assignments."""
    return _replaced(path, _merged(_token_findings(path, in_path=True) + _url_findings(path)))


def _replaced(text: str, findings: list[Finding]) -> Redaction:
    if not findings:
        return Redaction(text, {}, 0)
    parts: list[str] = []
    pos = line_no = 0
    lines: set[int] = set()
    for f in findings:
        parts.append(text[pos : f.start])
        marker = MARKER.format(rule=f.rule)
        # one marker per line of the secret, so line numbers after it do not move
        pieces = text[f.start : f.end].split("\n")
        parts.append("\n".join(marker if piece else "" for piece in pieces))
        line_no += text.count("\n", pos, f.start)
        lines.update(line_no + i for i, piece in enumerate(pieces) if piece)
        line_no += len(pieces) - 1
        pos = f.end
    parts.append(text[pos:])
    return Redaction("".join(parts), dict(sorted(Counter(f.rule for f in findings).items())), len(lines))
