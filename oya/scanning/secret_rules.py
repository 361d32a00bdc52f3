"""The secret rules of ``oya.scanning.redact``, as data.

Token patterns follow gitleaks' rule set (MIT, github.com/gitleaks/gitleaks, config/gitleaks.toml)
and detect-secrets' plugins (Apache-2.0, github.com/Yelp/detect-secrets, detect_secrets/plugins);
the secret-looking names follow detect-secrets' keyword plugin (its denylist). Each token
pattern starts with a literal, so Python's regex engine scans for it fast.
"""

from __future__ import annotations

# (rule, pattern, needs a non-word character before it)
TOKEN_PATTERNS: tuple[tuple[str, str, bool], ...] = (
    ("aws_access_key_id", r"AKIA[A-Z0-9]{16}(?![A-Za-z0-9])", True),
    ("aws_access_key_id", r"ASIA[A-Z0-9]{16}(?![A-Za-z0-9])", True),
    ("github_token", r"gh[pousr]_[A-Za-z0-9]{36,}", True),
    ("github_token", r"github_pat_[A-Za-z0-9_]{22,}", True),
    ("gitlab_token", r"glpat-[A-Za-z0-9_-]{20,}", True),
    ("slack_token", r"xox[abposre]-[A-Za-z0-9-]{10,}", True),
    ("slack_token", r"xapp-[0-9]-[A-Za-z0-9]{6,}-[0-9]{6,}-[A-Za-z0-9]{16,}", True),  # app-level
    ("slack_webhook", r"hooks\.slack\.com/services/[A-Za-z0-9_/]{20,}", False),
    ("stripe_key", r"sk_live_[A-Za-z0-9]{16,}", True),
    ("stripe_key", r"rk_live_[A-Za-z0-9]{16,}", True),
    ("stripe_key", r"sk_test_[A-Za-z0-9]{16,}", True),
    ("stripe_key", r"rk_test_[A-Za-z0-9]{16,}", True),
    ("stripe_key", r"whsec_[A-Za-z0-9]{24,}", True),  # a webhook's signing secret
    ("anthropic_key", r"sk-ant-[A-Za-z0-9_-]{32,}", True),
    ("openai_key", r"sk-[A-Za-z0-9_-]{32,}", True),
    ("google_api_key", r"AIza[A-Za-z0-9_-]{35}", True),
    ("huggingface_token", r"hf_[A-Za-z0-9]{34,}", True),
    ("npm_token", r"npm_[A-Za-z0-9]{36}", True),
    ("pypi_token", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}", True),
    ("sendgrid_key", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", True),
    ("digitalocean_token", r"do[pro]_v1_[a-f0-9]{64}", True),
    ("shopify_token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", True),
    ("azure_storage_key", r"AccountKey=[A-Za-z0-9+/=]{40,}", False),
    ("jwt", r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", True),
)
# a token holding one of these is documentation ("AKIAIOSFODNN7EXAMPLE")
TOKEN_PLACEHOLDERS = ("example", "xxxxxxxx", "00000000")
# a URL's password that is a word of the docs ("postgres://user:password@host")
URL_PLACEHOLDERS = frozenset(
    {"password", "pass", "passwd", "pw", "pwd", "secret", "token", "x", "xxx", "foo", "bar", "baz", "test"}
)

# Lines holding one of these (lower case) are the only ones the assignment rules look at.
KEYWORDS = ("passw", "pw", "pass", "secret", "token", "key", "auth", "credential", "dockerc")

# A name is secret-looking when its last part ends with a strong word (DB_PASSWORD, apiToken),
# is one of the exact names (pwd, pass, auth), or is "key"/"base"/... after a qualifier
# (SECRET_KEY, api_key, secret_key_base); never when its last part names something else.
STRONG_ENDINGS = ("password", "passwd", "passphrase", "secret", "token", "apikey")
EXACT_NAMES = frozenset({"pwd", "pass", "auth", "pw"})
# Whole names (lower case) whose value is a key or a credential file: the data keys of a
# Kubernetes Secret of type tls, dockerconfigjson, dockercfg and ssh-auth (tls.crt is public).
SECRET_DATA_KEYS = frozenset({"tls.key", ".dockerconfigjson", ".dockercfg", "ssh-privatekey"})
KEY_QUALIFIERS = frozenset(
    {"secret", "private", "api", "access", "auth", "client", "signing", "encryption", "master", "account"}
    | {"service", "db", "database", "app", "license", "consumer", "subscription", "crypt"}
)
NAME_NOT_SECRET = frozenset(
    """name names file files path paths dir url uri urls endpoint type types field fields header headers
    env var vars length len id ids prefix suffix policy validator validators reset label placeholder
    regex pattern ttl expiry expires expiration timeout count min max required enabled mode format
    class manager provider source ref hint help message msg prompt text title key_id keyid limit
    size kind version param params arg args option options setting settings attr column col index
    idx schema model form input widget display visible hidden confirm confirmation changed
    strength location store backend backends handler callback method methods fn func function
    cache lifetime age rotation salt_name mask endpoint_url host port user username login email""".split()
)

# Values that are words of configuration or docs, not credentials.
NOT_SECRET_VALUES = frozenset(
    """true false yes no on off null none nil undefined required optional string str bytes int bool
    password passwd secret token apikey api_key changeme change_me default empty hidden private public
    bearer basic header query cookie env environment dummy example placeholder sample test""".split()
)
PLACEHOLDER_PARTS = (
    "changeme",
    "change_me",
    "change-me",
    "your_",
    "your-",
    "yourpass",
    "xxxx",
    "***",
    "...",
    "…",
)
