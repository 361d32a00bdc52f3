"""The secret corpus shared by tests/adapters/test_redact.py and the end-to-end leak test.

Every secret is assembled from pieces at run time so no line of Oya's own source is one
(Oya indexes itself, and hosting providers scan pushes for tokens). Each positive carries a
canary; negatives are ordinary code and configuration that must be left alone.
"""

from __future__ import annotations

CANARY = "Qz7" + "OYACANARY" + "x9K"  # letters and digits, like a generated password
WORD_CANARY = "OYASECRET" + "MARKER"  # one class, no digit: caught by entropy alone
B64 = "b3lh" + "Y2FuYXJ5OnMzY3IzdA=="  # base64 of a user:password pair
PK_BEGIN = "-----BEGIN RSA PRIVATE" + " KEY-----"
PK_END = "-----END RSA PRIVATE" + " KEY-----"
JWT = "ey" + "JhbGciOiJIUzI1NiJ9.ey" + "JzdWIiOiIxMjM0NTY3ODkwIn0." + CANARY + "sig"

# (form, language, text, rule): each text holds CANARY (or the named token) once.
POSITIVES = [
    ("yaml unquoted password", "yaml", f"db:\n  password: {CANARY}\n", "secret_assignment"),
    ("yaml unquoted api_key", "yaml", f"service:\n  api_key: {CANARY}\n", "secret_assignment"),
    ("yaml quoted", "yaml", f'auth_token: "{CANARY}"\n', "secret_assignment"),
    ("yaml word password", "yaml", f"password: {WORD_CANARY}\n", "secret_assignment"),
    ("k8s secret data", "yaml", f"kind: Secret\ndata:\n  db-password: {B64}\n", "secret_assignment"),
    ("ini", "ini", f"[database]\nuser = app\npassword = {CANARY}\n", "secret_assignment"),
    ("ini colon", "ini", f"[auth]\nclient_secret: {CANARY}\n", "secret_assignment"),
    ("toml", "toml", f'[tool.deploy]\nsecret_key = "{CANARY}"\n', "secret_assignment"),
    ("json", "json", f'{{"name": "x", "client_secret": "{CANARY}"}}\n', "secret_assignment"),
    ("docker config auth", "json", f'{{"auths": {{"r.io": {{"auth": "{B64}"}}}}}}\n', "secret_assignment"),
    ("env export", "shell", f"export API_TOKEN={CANARY}\n", "secret_assignment"),
    ("env line", None, f"DEBUG=1\nSTRIPE_SECRET={CANARY}\n", "secret_assignment"),
    ("dockerfile ENV", "dockerfile", f"FROM python\nENV DB_PASSWORD {CANARY}\n", "secret_assignment"),
    ("cli flag", "shell", f"mysql --user app --password {CANARY} db\n", "secret_assignment"),
    ("python assignment", "python", f'DB_PASSWORD = "{CANARY}"\n', "secret_assignment"),
    ("python word", "python", f'password = "{WORD_CANARY}"\n', "secret_assignment"),
    ("python setdefault", "python", f'os.environ.setdefault("API_KEY", "{CANARY}")\n', "secret_assignment"),
    ("python getenv default", "python", f'key = os.getenv("SECRET_KEY", "{CANARY}")\n', "secret_assignment"),
    ("python environ item", "python", f'os.environ["GITHUB_TOKEN"] = "{CANARY}"\n', "secret_assignment"),
    ("python dict", "python", f"cfg = {{'password': '{CANARY}'}}\n", "secret_assignment"),
    ("python kwarg", "python", f'connect(host="db", password="{CANARY}")\n', "secret_assignment"),
    ("js const", "javascript", f'const apiKey = "{CANARY}";\n', "secret_assignment"),
    ("js object", "typescript", f"export default {{ clientSecret: '{CANARY}' }}\n", "secret_assignment"),
    ("go short assignment", "go", f'token := "{CANARY}"\n', "secret_assignment"),
    ("ruby hash rocket", "ruby", f'config = {{ :password => "{CANARY}" }}\n', "secret_assignment"),
    ("makefile", "makefile", f"DB_PASS := {CANARY}\n", "secret_assignment"),
    ("markdown sample", "markdown", f"Set it:\n\n    AWS_SECRET_ACCESS_KEY={CANARY}\n", "secret_assignment"),
    (
        "bearer header",
        "python",
        f'headers = {{"Authorization": "Bearer {CANARY}"}}\n',
        "authorization_header",
    ),
    ("basic header", "shell", f"curl -H 'Authorization: Basic {B64}' https://x\n", "authorization_header"),
    ("yaml header", "yaml", f"headers:\n  Authorization: Bearer {CANARY}\n", "authorization_header"),
    ("postgres url", "python", f'DSN = "postgres://app:{CANARY}@db:5432/app"\n', "url_credentials"),
    ("url in yaml", "yaml", f"broker: amqp://guest:{CANARY}@rabbit/\n", "url_credentials"),
    ("private key", "python", f'KEY = """{PK_BEGIN}\nMIIE{CANARY}\nAAAA\n{PK_END}"""\n', "private_key"),
    ("jwt", "javascript", f"const t = '{JWT}';\n", "jwt"),
]

TOKENS = [
    ("aws_access_key_id", "AK" + "IA" + "OYACANARY1234567"),
    ("aws_access_key_id", "AS" + "IA" + "OYACANARY1234567"),
    ("github_token", "gh" + "p_" + "OYACANARY" + "0123456789abcdefghijklmnopq"),
    ("github_token", "github" + "_pat_" + "11OYACANARY" + "0123456789abcdefghij"),
    ("gitlab_token", "gl" + "pat-" + "OYACANARY" + "0123456789ab"),
    ("slack_token", "xo" + "xb-" + "1234567890-OYACANARY"),
    ("stripe_key", "sk" + "_live_" + "OYACANARY" + "0123456789"),
    ("openai_key", "sk" + "-proj-" + "OYACANARY" + "0123456789abcdefghijklmnop"),
    ("anthropic_key", "sk" + "-ant-api03-" + "OYACANARY" + "0123456789abcdefghijklmn"),
    ("google_api_key", "AI" + "za" + "OYACANARY" + "0123456789abcdefghijklmnop"),
    ("huggingface_token", "hf" + "_" + "OYACANARY" + "abcdefghijklmnopqrstuvwxy"),
    ("npm_token", "np" + "m_" + "OYACANARY" + "abcdefghijklmnopqrstuvwxyz0"),
]

NEGATIVES = [
    ("python", 'password = request.form["password"]'),
    ("python", "token = tokenize(text)"),
    ("python", "api_key: str"),
    ("python", "def login(user, password=None):"),
    ("python", 'api_key = os.environ["API_KEY"]'),
    ("python", 'TOKEN_TYPE = "token_type"'),
    ("python", 'token_type = "bearer"'),
    ("python", 'password_field = "passwordConfirmation"'),
    ("python", 'tokenizer_class = "LlamaTokenizerFast"'),
    ("python", 'SECRET_KEY_SETTING = "DJANGO_SECRET_KEY_FALLBACK"'),
    ("python", 'SESSION_KEY = "_auth_user_id"'),
    ("python", 'publicKeyToken = "1fc8b3b9a1e18e3b"'),
    ("python", 'password = "changeme-changeme-123"'),
    ("python", 'api_key = "your_api_key_here_123"'),
    ("python", 'API_KEY = "${API_KEY}"'),
    ("python", 'if csrf_token == "NOTPROVIDED":'),
    ("python", 'headers = {"Authorization": f"Bearer {token}"}'),
    ("python", 'headers = {"Authorization": "Bearer " + token}'),
    ("python", 'url = "postgres://user:password@localhost/db"'),
    ("python", 'aws_doc = "' + "AK" + 'IAIOSFODNN7EXAMPLE"'),
    ("python", 'RULES = [("github_token", r"gh[pousr]_[A-Za-z0-9]{36,}")]'),
    ("python", 'deps = [("auth", "0001_initial")]'),
    ("python", "PASSWORD_MIN_LENGTH = 12"),
    ("javascript", "const token = await getToken(user);"),
    ("javascript", "const apiKey = process.env.API_KEY;"),
    ("yaml", "api_key: <your-key>"),
    ("yaml", "password: ${DB_PASSWORD}"),
    ("yaml", "password: changeme"),
    ("yaml", 'password: "{{ vault_db_password }}"'),
    ("yaml", "token: ${{ secrets.GITHUB_TOKEN }}"),
    ("yaml", "secretName: my-tls-secret"),
    ("yaml", "password_file: /run/secrets/db"),
    ("yaml", "password: null"),
    ("yaml", "password:"),
    ("yaml", "api_key: !vault |"),
    ("ini", "password = %(DB_PASSWORD)s"),
    ("shell", 'export GITHUB_TOKEN="$(gh auth token)"'),
    ("shell", "curl -H 'Authorization: Bearer $TOKEN' https://x"),
    ("markdown", "The token: is sent in the header; see the password reset view."),
    ("markdown", "Use `Authorization: Bearer <token>` with your token."),
    ("markdown", "user = authenticate(request, username=username, password=password)"),
    ("text", "https://${USER}:${PASS}@host/"),
]
