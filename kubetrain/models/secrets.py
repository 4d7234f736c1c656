"""Credentials in job documents, and the ExternalSecret kind render mode emits for them.

A job document never holds a credential value. It *names* a credential (``credentials:
cos-hmac``) kept outside the repository: in render mode in the External Secrets store the stack
names (``kubetrain:secretStore``), in Pulumi mode in the stack's encrypted config
(``kubetrain:credentials.<name>.<key>``). This module holds the rules shared by every kind:

* :data:`CredentialName`, the type of a field naming a credential. A mapping there (the keys and
  values of the credential itself) is an input error, and so is a name that is not one; neither
  message repeats the value received, since it may be secret material.
* :func:`looks_like_credential` and :func:`credential_value_message`, used for keys such as
  ``accessKey`` or ``password`` written where no such field exists, and for env var names.
* :func:`credential_problems`, the one rule every job document of every kind and mode obeys:
  no credential-named env var, annotation, label, node-selector key or command-line flag with a
  literal value (see its docstring, and :data:`NOT_CREDENTIALS_ANNOTATION` for names that only
  look like credentials).
* which values a message must never quote is :func:`kubetrain.kube.schemas.sensitive_path`,
  built on the same credential names.
* :class:`ExternalSecret`, the model of the ``external-secrets.io/v1`` objects kubetrain writes,
  registered so ``kubetrain validate`` checks them without an extra schema location.
"""

from __future__ import annotations

import itertools
import re
import urllib.parse
from collections.abc import Iterator, Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BeforeValidator, Field

from ..kube.names import looks_like_credential
from .base import K8sType, Strict, resource_kind

__all__ = [
    "CREDENTIAL_NAME_PATTERN",
    "NOT_CREDENTIALS_ANNOTATION",
    "PULL_CREDENTIAL_KEY",
    "TOKEN_HINTS",
    "CredentialName",
    "ExternalSecret",
    "configmap_credential_problems",
    "credential_name_problem",
    "credential_problems",
    "credential_value_message",
    "external_secret_template_problems",
    "has_url_password",
    "is_credential_entry",
    "looks_like_credential",
    "not_credentials",
    "percent_decoded",
    "secret_value_kind",
]

#: Annotation of a job document naming, comma-separated, env vars, annotation, label and
#: node-selector keys and command-line flags that look like credentials but hold none
#: (``kubetrain.io/not-credentials: "VAULT_TOKEN_PATH,vault.hashicorp.com/agent-inject-token"``).
NOT_CREDENTIALS_ANNOTATION = "kubetrain.io/not-credentials"

#: Key of an image pull credential that holds a docker config JSON (written under
#: ``.dockerconfigjson`` in the pull Secret; no leading dot, so Pulumi config paths stay plain).
PULL_CREDENTIAL_KEY = "dockerconfigjson"

#: A credential name: a store key (``cos-hmac``, ``team/cos-hmac``) that is also a segment of the
#: Pulumi config path ``kubetrain:credentials.<name>.<key>`` (so no dots).
CREDENTIAL_NAME_PATTERN = r"[A-Za-z0-9]([-A-Za-z0-9_/]*[A-Za-z0-9])?"
_CREDENTIAL_NAME = re.compile(CREDENTIAL_NAME_PATTERN)
_CREDENTIAL_NAME_MAX = 253


def credential_value_message(where: str = "here") -> str:
    """The message for credential material written in a job document (never quotes the value)."""
    return (
        f"a credential value is not allowed {where}: job documents only name credentials "
        "(`credentials: <name>`); keep the value in the stack's secret store (render mode, "
        "kubetrain:secretStore) or set it with `pulumi config set --secret --path "
        "'kubetrain:credentials.<name>.<key>'` (Pulumi mode)"
    )


# --- the one rule: no credential in a job document ----------------------------------------------

#: Fields whose keys are free-form names with string values: a credential-named key there is
#: credential material (``annotations: {password: ...}``).
_NAMED_VALUES = ("annotations", "labels", "nodeSelector", "NodeSelector")
#: Fields holding command lines (lists of arguments, or one shell line): ``--password=...`` and
#: ``TOKEN=...`` there are credential material.
_COMMAND_LINES = ("command", "args", "entrypoint")
_ASSIGNMENT = re.compile(r"-{0,2}([A-Za-z_][A-Za-z0-9_.-]*)=(.*)", re.DOTALL)
# A flag given without "=": its value is the next word (``--password hunter2``).
_FLAG = re.compile(r"--?([A-Za-z_][A-Za-z0-9_.-]*)")
# A value that only refers to another env var ($(VAR) or ${VAR}) holds nothing itself.
_REFERENCE = re.compile(r"\$\([A-Za-z_][A-Za-z0-9_]*\)|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?")
# The detectors below read every string of every document, so each is linear in the length of
# the string (strings are bounded only by a file's 128 MiB): no nested quantifier, and every
# pattern that repeats a class starts where a run of that class starts (a lookbehind), so a
# failed attempt never rescans the run from each of its characters.
#
# The userinfo of a URL (RFC 3986: scheme "://" user [":" password] "@" host): group 1.
# postgresql://u:pw@db, https://ghp_TOKEN@github.com, s3://AKIA...:@bucket.
_URL_USERINFO = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://([^\s/?#@]*)@")
# name=value parameters of a URL's query (?password=..&..), of its fragment (#access_token=..,
# OAuth's implicit flow), or of a JDBC URL (;password=..;).
_URL_PARAMETER = re.compile(r"[?&;#]([A-Za-z_][A-Za-z0-9_.-]*)=([^&;#\s]*)")
# Oracle's JDBC thin form: jdbc:oracle:thin:user/password@host.
_JDBC_USER_PASSWORD = re.compile(r"jdbc:oracle:[A-Za-z0-9]+:[^\s/@]*/([^\s@]+)@")
#: Prefixes of tokens services issue (GitHub, GitLab, Slack, Hugging Face, OpenAI, AWS, Google
#: OAuth, JWTs): a URL whose user is one of them holds the token.
_TOKEN_PREFIXES = (
    "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "gldt-", "glptt-",
    "xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-", "hf_", "sk-", "sk_live_", "rk_live_",
    "AKIA", "ASIA", "ya29.", "eyJ",
)  # fmt: skip
#: URL parameters (and name=value pairs of connection strings) that carry a credential without
#: a name :func:`looks_like_credential` knows, compared without case, "-" and "_": ODBC's and
#: MySQL's PWD, PASS (ftp and mail gateways), a passphrase, a JWT, Azure's AccountKey and
#: SharedAccessKey (connection strings) and SAS sig, signed URLs' signatures and credentials
#: (AWS X-Amz-*, Google X-Goog-*, ``credential=`` of an upload API).
_URL_CREDENTIAL_PARAMETERS = frozenset(
    {"pwd", "pass", "passphrase", "jwt", "accountkey", "sharedaccesskey",
     "sharedaccesssignature", "sig", "signature", "xamzsignature", "xamzcredential",
     "xgoogsignature", "xgoogcredential", "credential", "credentials"}
)  # fmt: skip
#: Parameters whose name alone does not say: ``key=`` is an API key on Google's APIs
#: (``?key=AIza...``) but an object's name on others (``?key=data/train.csv``), so it is a
#: credential when its value looks like a token (:func:`_random_looking`).
_URL_SHAPED_PARAMETERS = frozenset({"key"})
#: Webhook URLs: the URL itself is the secret (whoever has it can post), so one is refused
#: whatever it carries (Slack's incoming webhooks and workflow triggers, Discord's, Microsoft
#: Teams' incoming webhooks). Matched on the lower-cased, percent-decoded text.
_WEBHOOK_URL = re.compile(
    r"hooks\.slack\.com/(?:services|workflows|triggers)/[a-z0-9]"
    r"|discord(?:app)?\.com/api/webhooks/[0-9]"
    r"|\.webhook\.office\.com/webhookb2/[a-z0-9]"
)
_URL_MESSAGE = (
    "a URL with a credential in it (scheme://user:password@host, a token as its user, or a "
    "password=, token= or signature parameter)"
)
#: Rounds of percent-decoding a string gets before it is read (``%253D`` is ``%3D``, then
#: ``=``: a URL carried in another URL's parameter is encoded twice).
_DECODE_ROUNDS = 3

Path = tuple[str | int, ...]


def not_credentials(annotations: Any) -> frozenset[str]:
    """The names a job document's :data:`NOT_CREDENTIALS_ANNOTATION` lists (given its
    ``metadata.annotations``)."""
    listed = (
        annotations.get(NOT_CREDENTIALS_ANNOTATION) if isinstance(annotations, Mapping) else None
    )
    if not isinstance(listed, str):
        return frozenset()
    return frozenset(name.strip() for name in listed.split(",") if name.strip())


def _literal(value: Any) -> bool:
    """Whether ``value`` holds something of its own (not empty, not only env references)."""
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, str):
        return bool(_REFERENCE.sub("", value).strip())
    return True


def _is_credential(name: Any, allowed: frozenset[str]) -> bool:
    return isinstance(name, str) and name not in allowed and looks_like_credential(name)


def is_credential_entry(name: Any, value: Any, allowed: frozenset[str]) -> bool:
    """Whether ``name: value`` (an env var, an annotation, a flag...) is credential material by
    the rule of :func:`credential_problems`: a credential-named key
    (:func:`looks_like_credential`) with a literal value, or one of the names
    :func:`_named_credential` knows with the value that makes it one."""
    if not isinstance(name, str) or name in allowed:
        return False
    return (looks_like_credential(name) and _literal(value)) or _named_credential(name, value)


# --- names looks_like_credential does not know ----------------------------------------------------

_NAME_WORDS = re.compile(r"[^a-z0-9]+")
#: Words before ``KEY`` that make ``<WORD>_KEY`` a secret key, whatever its value (not a path):
#: a key that signs or encrypts (SIGNING, ENCRYPTION, ENCRYPT, CRYPTO, CIPHER, AES, HMAC, JWT,
#: MASTER, SESSION, COOKIE: a web framework's secret), that logs in (SSH, GPG, PGP, DEPLOY,
#: AUTH), a storage account's or shared access key (ACCOUNT, STORAGE, SHARED, SAS, Azure's
#: SUBSCRIPTION), a licence (LICENSE, LICENCE), and the services whose API key is a plain
#: ``<SERVICE>_KEY`` variable (KAGGLE with KAGGLE_USERNAME, OPENAI, ANTHROPIC, STRIPE, WANDB,
#: COMET, WEBHOOK). Any other ``*_KEY`` names a key of a map or table (PARTITION_KEY,
#: CACHE_KEY, SORT_KEY, S3_KEY, OBJECT_KEY) and is left to the value rules.
_SECRET_KEY_WORDS = frozenset(
    {"signing", "encryption", "encrypt", "crypto", "cipher", "aes", "hmac", "jwt", "master",
     "session", "cookie", "ssh", "gpg", "pgp", "deploy", "auth", "account", "storage", "shared",
     "sas", "subscription", "license", "licence", "kaggle", "openai", "anthropic", "stripe",
     "wandb", "comet", "webhook"}
)  # fmt: skip
#: How the names :func:`_named_credential` knows end (a cheap first test: it reads every
#: annotation, label and env name).
_NAMED_ENDINGS = (
    "passphrase", "jwt", "credential", "credentials", "creds", "pass", "pwd", "pat", "key", "auth"
)  # fmt: skip
_BOOLEAN_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "none", "null"})
_NUMBER = re.compile(r"[-+]?[0-9]+(?:\.[0-9]+)?")


def _named_credential(name: str, value: Any) -> bool:
    """Credential names :func:`looks_like_credential` misses, each with the value that makes it
    one. The name is read as words (split at anything but letters and digits, without case:
    ``DB_PASS`` is ``db pass``; ``dbPass`` is one word, not matched) so that ``PASSES``,
    ``BYPASS_CACHE``, ``MONKEY``, ``KEYBOARD`` and ``AUTHOR`` are not credentials:

    * last word PASSPHRASE (GPG_PASSPHRASE) or JWT (JWT, AUTH_JWT): any value but an ordinary
      one (:func:`_ordinary`: a path, a number, a boolean, a URL; ``USE_JWT=true`` stays);
    * CREDENTIAL(S) or CREDS (CREDENTIALS, AWS_CREDS) only with a random-looking value: such a
      name as often holds a credential's *name* (``kubetrain.io/ssh-credential: hpc/keys``) or
      file (``GOOGLE_APPLICATION_CREDENTIALS=/var/secrets/key.json``) as the credential, whose
      key file or JSON the value rules find anyway;
    * PASS, PWD, PAT after another word (DB_PASS, MYSQL_PWD, GITHUB_PAT): a password or a
      personal access token, unless ordinary; alone (PASS, PAT, the shell's PWD, a directory)
      only a random-looking value (:func:`_random_looking`);
    * KEY after a word of :data:`_SECRET_KEY_WORDS` (KAGGLE_KEY, SIGNING_KEY), unless ordinary;
    * AUTH after another word (NPM_AUTH, BASIC_AUTH: npm's ``_auth`` is base64 of user:password)
      only with a random-looking value: ``ENABLE_AUTH=true`` and ``KUBE_AUTH=oidc`` are
      settings (AUTH alone is one of looks_like_credential's words).

    kubetrain's own annotations (``kubetrain.io/...``) say what their values are, none a secret.
    """
    low = name.lower()
    if not low.rstrip("-_./: ").endswith(_NAMED_ENDINGS) or name.startswith("kubetrain.io/"):
        return False
    if not isinstance(value, str) or not _literal(value):
        return False
    words = [w for w in _NAME_WORDS.split(low) if w]
    if not words:
        return False
    last, before = words[-1], words[:-1]
    if last in ("passphrase", "jwt"):
        return not _ordinary(value)
    if last in ("credential", "credentials", "creds"):
        return _random_looking(value)
    if last in ("pass", "pwd", "pat"):
        return not _ordinary(value) if before else _random_looking(value)
    if last == "key":
        return bool(before) and before[-1] in _SECRET_KEY_WORDS and not _ordinary(value)
    if last == "auth":
        return bool(before) and _random_looking(value)
    return False


def _ordinary(value: str) -> bool:
    """Whether ``value`` is what a setting holds rather than a secret: a path (``/``, ``./``,
    ``../``, ``~/``), a number, a boolean word, or a URL (one carrying a credential is found by
    :func:`has_url_password` whatever the name)."""
    text = value.strip()
    return (
        text.startswith(("/", "./", "../", "~/"))
        or text.lower() in _BOOLEAN_WORDS
        or _NUMBER.fullmatch(text) is not None
        or "://" in text
    )


def _random_looking(value: str) -> bool:
    """Whether ``value`` looks generated rather than written: at least 8 characters, no space,
    not :func:`_ordinary`, letters and digits both, and at least three changes between
    lower-case letters, capitals and digits (``Q7xLm2Rt9VbK``, ``hunter2hunter2``; not
    ``resnet50``, ``github-oidc-v2`` or ``timestamp``). Linear in ``value``."""
    text = value.strip()
    if len(text) < 8 or any(c.isspace() for c in text) or _ordinary(text):
        return False
    kinds = [
        "d" if c.isdigit() else "u" if c.isupper() else "l"
        for c in text
        if c.isascii() and c.isalnum()
    ]
    return (
        "d" in kinds
        and ("l" in kinds or "u" in kinds)
        and (sum(a != b for a, b in itertools.pairwise(kinds)) >= 3)
    )


# --- values that hold a credential whatever field holds them --------------------------------------


def percent_decoded(text: str) -> str:
    """``text`` with its percent-escapes decoded, :data:`_DECODE_ROUNDS` times at most: a
    service reads ``?token%3D...`` as ``?token=...`` and ``ghp%5F...`` as ``ghp_...``, so the
    detectors read both forms. Linear in ``text`` (each round is)."""
    for _ in range(_DECODE_ROUNDS):
        if "%" not in text:
            break
        decoded = urllib.parse.unquote(text)
        if decoded == text:
            break
        text = decoded
    return text


def _forms(value: str) -> tuple[str, ...]:
    """``value`` as written, and percent-decoded when that differs."""
    decoded = percent_decoded(value)
    return (value,) if decoded == value else (value, decoded)


def _credential_parameter(name: str, value: str) -> bool:
    """Whether ``name=value`` (a URL's parameter, a pair of a connection string) gives a
    credential: a credential name (:func:`looks_like_credential`, or one of
    :data:`_URL_CREDENTIAL_PARAMETERS`) with a literal value, or ``key=`` with a token."""
    value = value.strip().strip("'\"")
    squashed = re.sub(r"[^a-z0-9]", "", name.lower())
    if looks_like_credential(name) or squashed in _URL_CREDENTIAL_PARAMETERS:
        return _literal(value)
    if squashed in _URL_SHAPED_PARAMETERS:
        return _random_looking(value) or value.startswith(_TOKEN_PREFIXES)
    return False


def has_url_password(value: Any) -> bool:
    """Whether ``value`` holds a URL carrying a literal credential: a password in its userinfo
    (``s3://KEY:SECRET@bucket``, ``https://user:pw@host``), a token as its user
    (``https://ghp_...@github.com``, ``s3://AKIA...:@bucket``), a credential-named parameter of
    its query or fragment (``?password=...``, ``;password=...`` of a JDBC URL,
    ``#access_token=``, ``?pass=``, ``?credential=``, ``?key=AIza...``, a signed URL's
    signature), Oracle's ``jdbc:oracle:thin:user/password@host``, or a webhook's URL (the URL
    is the secret). Percent-escapes are decoded first (``?token%3D...``, ``ghp%5F...@``);
    names are compared without case. A credential that only refers to an env var,
    ``$(DB_PASSWORD)``, holds nothing itself."""
    if not isinstance(value, str) or not (
        "://" in value or "jdbc:" in value or "=" in value or "%" in value
    ):
        return False
    for text in _forms(value):
        if "://" in text:
            for m in _URL_USERINFO.finditer(text):
                user, _, password = m[1].partition(":")
                # An escaped ":" (user%3Apw@) still splits user and password for most clients.
                user, _, more = percent_decoded(user).partition(":")
                if _literal(percent_decoded(password) + more) or _looks_like_token(user):
                    return True
            if _WEBHOOK_URL.search(text.lower()):
                return True
        if "jdbc:" in text and any(_literal(m[1]) for m in _JDBC_USER_PASSWORD.finditer(text)):
            return True
        if (
            ("://" in text or "jdbc:" in text)
            and "=" in text
            and any(_credential_parameter(m[1], m[2]) for m in _URL_PARAMETER.finditer(text))
        ):
            return True
    return False


def _looks_like_token(user: str) -> bool:
    """Whether a URL's one-word userinfo (percent-decoded) is a token rather than a user name
    (``git``, ``deploy``): a prefix services give their tokens, or a long run of letters and
    digits with no dot or ``%`` (an e-mail address is a user)."""
    if not _literal(user):
        return False
    if user.startswith(_TOKEN_PREFIXES):
        return True
    return (
        len(user) >= 20
        and "." not in user
        and "%" not in user
        and "@" not in user
        and any(c.isdigit() for c in user)
        and any(c.isalpha() for c in user)
    )


# A PEM private key of any algorithm (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP ... BLOCK): its
# header. The words between BEGIN and PRIVATE are at most 40 characters.
_PRIVATE_KEY = re.compile(r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
# Tokens services issue, by their documented forms, each starting a run of token characters:
# Hugging Face hf_, GitHub gh?_ and github_pat_, GitLab glpat- and its other prefixes, Slack
# xox?-, OpenAI sk- (sk-proj-...), Stripe sk_live_/rk_live_/sk_test_, a Google API key
# (AIza + 35) and OAuth access token (ya29.), a JWT (two base64url JSON parts, then the
# signature). The body must mix letters and digits or cases (:func:`_mixed`).
_TOKEN = re.compile(
    r"(?<![A-Za-z0-9_-])(?:"
    r"hf_([A-Za-z0-9]{30,})"
    r"|gh[pousr]_([A-Za-z0-9]{30,})"
    r"|github_pat_([A-Za-z0-9_]{30,})"
    r"|gl(?:pat|dt|ptt|rt|cbt|oas)-([A-Za-z0-9_-]{20,})"
    r"|xox[abposr]-([A-Za-z0-9-]{10,})"
    r"|sk-([A-Za-z0-9_-]{32,})"
    r"|[sr]k_(?:live|test)_([A-Za-z0-9]{20,})"
    r"|AIza([A-Za-z0-9_-]{35})(?![A-Za-z0-9_-])"
    r"|ya29\.([A-Za-z0-9_-]{20,})"
    r"|eyJ[A-Za-z0-9_-]{8,}\.(eyJ[A-Za-z0-9_-]{8,})\.[A-Za-z0-9_-]*"
    r")"
)
# An Authorization header's credential: a bearer token, or Basic's base64 of user:password.
_BEARER = re.compile(
    r"(?<![A-Za-z0-9])bearer[ \t]+([A-Za-z0-9._~+/-]{16,})", re.IGNORECASE | re.ASCII
)
_BASIC = re.compile(
    r"authorization[\"']?[ \t]*[:=][ \t]*[\"']?basic[ \t]+([A-Za-z0-9+/]{8,}={0,2})",
    re.IGNORECASE | re.ASCII,
)
# name=value pairs of a connection string or DSN, an assignment in a shell line, or a parameter
# of something URL-like without "://" (hf:datasets/x?token=..): they start the string or follow
# ";", ",", a space, "?", "&" or "#" (Server=h;Password=..; host=db password=..;
# AccountKey=..; TOKEN=..). A quoted value ends at its quote. A flag (--token=..) is the
# command-line rule's (_flags), so its message says which flag.
_PAIR = re.compile(
    r"(?<![^;,\s?&#])([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*=[ \t]*(\"[^\"]*\"|'[^']*'|[^;,\s\"']*)"
)
# A JSON member whose name is a credential's ("private_key": "-----BEGIN...", a service
# account key; "client_secret": ..., an OAuth client; "password": ...).
_JSON_MEMBER = re.compile(r'"([A-Za-z_][A-Za-z0-9_.-]*)"[ \t\r\n]*:[ \t\r\n]*"([^"]*)"')
# An AWS access key id, and a secret access key (40 base64 characters, here 30 to 60) beside it.
_AWS_KEY_ID = re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])")
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])([A-Za-z0-9/+]{30,60})(?![A-Za-z0-9/+=])")

#: What ``kubetrain validate``'s prefilter (:func:`kubetrain.validate.engine.credential_words`)
#: looks for in a file's text besides its hint words: every token :data:`_TOKEN` finds, the
#: webhook hosts, ``bearer`` and the name word ``PAT`` (GITHUB_PAT) leave one of these in the
#: text (no lookbehind here: an escape before a token, ``\thf_...``, hides what precedes it).
#: Each alternative is a literal or a bounded repeat, so the search is linear.
TOKEN_HINTS = re.compile(
    r"hf_[a-z0-9]{30}|gh[pousr]_[a-z0-9]{30}|github_pat_|gl(?:pat|dt|ptt|rt|cbt|oas)-"
    r"|xox[abposr]-|sk-[a-z0-9_-]{32}|[sr]k_(?:live|test)_|aiza|ya29\.|eyj|bearer"
    r"|hooks\.slack\.com|discord|webhook\.office\.com|pat(?![a-z0-9])",
    re.IGNORECASE | re.ASCII,
)

#: What :func:`secret_value_kind` says of each find, for messages (never the value).
_PRIVATE_KEY_KIND = "a private key, -----BEGIN ... PRIVATE KEY-----"
_TOKEN_KIND = "a token a service issued: hf_..., ghp_..., glpat-..., xoxb-..., AIza..., a JWT..."
_HEADER_KIND = "an Authorization header's credential: Bearer ... or Basic ..."
_PAIR_KIND = "a credential in a name=value pair: password=, PWD=, AccountKey=, token=..."
_JSON_KIND = 'a credential-named JSON member: "private_key", "client_secret", "password"...'
_AWS_KIND = "an AWS access key id with its secret access key"
_WEBHOOK_KIND = "a webhook URL, which is itself a secret"


def _mixed(text: str) -> bool:
    """Whether a token's body mixes letters and digits, or lower-case and capitals (a word
    such as ``sk-learn-estimator-for-classification`` does not)."""
    has_digit = any(c.isdigit() for c in text)
    has_lower = any(c.islower() for c in text)
    has_upper = any(c.isupper() for c in text)
    return has_digit + has_lower + has_upper >= 2


def secret_value_kind(value: Any) -> str | None:
    """What credential material ``value`` holds whatever field it is in, in words for a message
    (never the value itself), or ``None``: a URL carrying a credential
    (:func:`has_url_password`), a PEM private key, a token in a service's documented form, an
    Authorization header's credential, a credential-named ``name=value`` pair (a connection
    string, a DSN) or JSON member (a service-account key), an AWS key id with its secret key.
    The value is read as written and percent-decoded; each detector is linear in its length."""
    # Every string of every document comes here: cheap tests (length, a character) first.
    if not isinstance(value, str) or len(value) < 5:
        return None
    if has_url_password(value):
        return _WEBHOOK_KIND if _webhook(value) else _URL_MESSAGE
    for text in (value,) if "%" not in value else _forms(value):
        if "PRIVATE KEY" in text and _PRIVATE_KEY.search(text):
            return _PRIVATE_KEY_KIND
        if len(text) >= 15 and any(
            _mixed(next(g for g in m.groups() if g)) for m in _TOKEN.finditer(text)
        ):
            return _TOKEN_KIND
        if len(text) >= 23 and (
            any(_mixed(m[1]) for m in _BEARER.finditer(text)) or _BASIC.search(text)
        ):
            return _HEADER_KIND
        if "=" in text and any(_credential_parameter(m[1], m[2]) for m in _PAIR.finditer(text)):
            return _PAIR_KIND
        if '"' in text and any(
            _credential_parameter(m[1], m[2]) for m in _JSON_MEMBER.finditer(text)
        ):
            return _JSON_KIND
        if (
            ("AKIA" in text or "ASIA" in text)
            and _AWS_KEY_ID.search(text)
            and any(_all_classes(m[1]) for m in _AWS_SECRET.finditer(text))
        ):
            return _AWS_KIND
    return None


def _all_classes(text: str) -> bool:
    """Whether ``text`` has digits, lower-case letters and capitals (an AWS secret key does; a
    hex digest does not)."""
    return (
        any(c.isdigit() for c in text)
        and any(c.islower() for c in text)
        and any(c.isupper() for c in text)
    )


def _webhook(value: str) -> bool:
    """Whether ``value`` is (or holds) a webhook's URL, for the message."""
    return any(_WEBHOOK_URL.search(text.lower()) for text in _forms(value))


def _flags(value: Any) -> Iterator[tuple[Path, str, str]]:
    """(path, flag name, value) of every ``--name=value`` / ``NAME=value`` word with a literal
    value, and of every ``--name value`` pair of words (a flag, then a word that is not one),
    whether the two are one list item or two."""
    items = enumerate(value) if isinstance(value, list) else [((), value)]
    words: list[tuple[Path, str]] = []
    for index, item in items:
        if isinstance(item, str):
            path: Path = (index,) if isinstance(index, int) else ()
            words += [(path, word.strip("'\"")) for word in item.split()]
    for (path, word), (_, following) in itertools.pairwise([*words, ((), "-")]):
        m = _ASSIGNMENT.fullmatch(word)
        if m and _literal(m[2]):
            yield path, m[1], m[2]
        elif (
            (flag := _FLAG.fullmatch(word))
            and not following.startswith("-")
            and _literal(following)
        ):
            yield path, flag[1], following


def credential_problems(document: Any) -> list[tuple[Path, str]]:
    """Credential material written in a job document, as (field path, message) pairs.

    One rule for every kind and mode, wherever the document holds it (pod templates of any
    replica, a Learner's env, metadata): a credential-named (:func:`looks_like_credential`)

    * env var with a literal ``value`` (``valueFrom`` a Secret is the way; a value that only
      refers to another var, ``$(DB_PASSWORD)``, is fine), in Kubernetes' list form or a
      Learner's ``env`` mapping;
    * annotation, label or node-selector key with a non-empty value;
    * ``--flag=value`` or ``NAME=value`` word, or ``--flag value`` pair of words, in a
      ``command``, ``args`` or ``entrypoint``;

    the names :func:`_named_credential` knows (``DB_PASS``, ``GITHUB_PAT``, ``KAGGLE_KEY``...)
    with the values that make them credentials, in the same places; and anywhere, whatever
    the field's name, a value :func:`secret_value_kind` finds credential material in (a URL
    with a password, a private key, a token, a connection string's password...).

    A name listed in the job's :data:`NOT_CREDENTIALS_ANNOTATION` is not a credential. The
    messages never quote the value; a field gets one message (the first found).
    """
    meta = document.get("metadata") if isinstance(document, Mapping) else None
    allowed = not_credentials(meta.get("annotations") if isinstance(meta, Mapping) else None)
    found: list[tuple[Path, str]] = []
    todo: list[tuple[Any, Path]] = [(document, ())]
    while todo:
        value, path = todo.pop()
        if isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, dict | list):
                    todo.append((item, (*path, i)))
                elif kind := secret_value_kind(item):
                    where = str(path[-1]) if path else "a list"
                    found.append(((*path, i), _value_message(where, kind)))
            continue
        if not isinstance(value, dict):
            continue
        for key, item in value.items():
            here = (*path, key)
            if key == "env":
                found += _env_problems(item, here, allowed)
            elif key in _NAMED_VALUES and isinstance(item, dict):
                found += [
                    ((*here, name), credential_value_message(f"in {key}") + _ALLOW_HINT)
                    for name, text in item.items()
                    if is_credential_entry(name, text, allowed)
                ]
            elif key in _COMMAND_LINES:
                found += [
                    ((*here, *at), credential_value_message(f"in {key} ({flag}=...)") + _ALLOW_HINT)
                    for at, flag, text in _flags(item)
                    if is_credential_entry(flag, text, allowed)
                ]
            if isinstance(item, dict | list):
                todo.append((item, here))
            elif "env" not in (path[-1:] + path[-2:-1]) and (kind := secret_value_kind(item)):
                # A URL, a key or a token anywhere (a storageUri, an annotation, an endpoint):
                # it reaches rendered/ and Pulumi's inputs as it is written (env values:
                # _env_problems).
                found.append((here, _value_message(str(key), kind)))
    first: dict[Path, str] = {}
    for at, message in found:
        first.setdefault(at, message)
    return sorted(first.items(), key=lambda p: [str(x) for x in p[0]])


def configmap_credential_problems(configmap: Mapping[str, Any]) -> list[tuple[Path, str]]:
    """A ConfigMap's ``data`` keys named like credentials, with a literal value: credential
    material in plain text (a ConfigMap is no Secret), by the rule of
    :func:`credential_problems` and with the same way out (the object's
    :data:`NOT_CREDENTIALS_ANNOTATION`)."""
    meta = configmap.get("metadata")
    allowed = not_credentials(meta.get("annotations") if isinstance(meta, Mapping) else None)
    data = configmap.get("data")
    if not isinstance(data, Mapping):
        return []
    message = credential_value_message("in a ConfigMap") + _ALLOW_HINT
    return [
        (("data", name), message)
        for name, value in data.items()
        if is_credential_entry(name, value, allowed)
    ]


def external_secret_template_problems(obj: Mapping[str, Any]) -> list[tuple[Path, str]]:
    """Literal values in an ExternalSecret's ``spec.target.template.data``: the operator copies
    a template's text into the Secret, so a value with no template action (``{{ .password }}``)
    is secret material written in the repository. A key that holds no secret (a fixed
    setting) may be listed in the object's :data:`NOT_CREDENTIALS_ANNOTATION`."""
    if not str(obj.get("apiVersion", "")).startswith("external-secrets.io/"):
        return []
    if obj.get("kind") != "ExternalSecret":
        return []
    spec = obj.get("spec")
    target = spec.get("target") if isinstance(spec, Mapping) else None
    template = target.get("template") if isinstance(target, Mapping) else None
    data = template.get("data") if isinstance(template, Mapping) else None
    if not isinstance(data, Mapping):
        return []
    meta = obj.get("metadata")
    allowed = not_credentials(meta.get("annotations") if isinstance(meta, Mapping) else None)
    message = (
        "a literal value in an ExternalSecret's template is secret material in the repository "
        "(the operator copies it into the Secret): read it from the store (spec.data) and write "
        "the template as {{ .key }}" + _ALLOW_HINT
    )
    return [
        (("spec", "target", "template", "data", key), message)
        for key, value in data.items()
        if isinstance(value, str) and value and "{{" not in value and str(key) not in allowed
    ]


_ALLOW_HINT = (
    f"; if the name only looks like a credential, list it in the document's "
    f"{NOT_CREDENTIALS_ANNOTATION} annotation"
)


def _env_problems(env: Any, path: Path, allowed: frozenset[str]) -> list[tuple[Path, str]]:
    message = (
        credential_value_message("in env") + "; give it with valueFrom.secretKeyRef" + _ALLOW_HINT
    )
    if isinstance(env, dict):  # a Learner's env mapping
        entries = [((*path, name), name, value) for name, value in env.items()]
    elif isinstance(env, list):
        # A container's env (a pod template of any kind): it names a Secret, which render mode
        # delivers as an ExternalSecret (no `credentials:` field there to name one).
        message = (
            "a credential value is not allowed in env: give it with valueFrom.secretKeyRef, "
            "naming a Secret the stack delivers (render mode: an ExternalSecret in "
            "kubetrain:manifests, docs/secrets.md) or one listed in kubetrain:external.secrets"
            + _ALLOW_HINT
        )
        entries = [
            ((*path, i, "value"), entry.get("name"), entry.get("value"))
            for i, entry in enumerate(env)
            if isinstance(entry, dict)
        ]
    else:
        return []
    found = []
    for at, name, value in entries:
        if is_credential_entry(name, value, allowed):
            found.append((at, message))
        elif kind := secret_value_kind(value):
            found.append((at, _value_message("env", kind)))
    return found


def _value_message(where: str, kind: str) -> str:
    """The message for credential material found in a value (``kind``, from
    :func:`secret_value_kind`) of the field ``where``: it says what was found, never the
    value."""
    if where == "storageUri":  # a TrainJob's initializer: its credentials come from secretRef
        hint = (
            "; give the URL without them and the credentials in the initializer's secretRef "
            "(a Secret the initializer reads as env: AWS_ACCESS_KEY_ID, HF_TOKEN...)"
        )
    elif kind == _URL_MESSAGE:
        hint = (
            "; put the URL, or its password, in a Secret and read it with "
            "valueFrom.secretKeyRef (the password may also be $(VAR) of an env var that does)"
        )
    else:
        hint = (
            "; put it in a Secret and read it with valueFrom.secretKeyRef (or refer to an env "
            "var that does, $(VAR))"
        )
    return credential_value_message(f"in {where} ({kind})") + hint


def credential_name_problem(value: Any) -> str | None:
    """Why ``value`` cannot name a credential of the secret store, or ``None``. The value is
    never repeated: a malformed name is often a pasted key."""
    if not isinstance(value, str) or (
        len(value) > _CREDENTIAL_NAME_MAX or not _CREDENTIAL_NAME.fullmatch(value)
    ):
        return (
            "must name a credential of the secret store: letters, digits, '-', '_' and '/', "
            f"starting and ending with a letter or digit, at most {_CREDENTIAL_NAME_MAX} "
            "characters (the value received is not shown, in case it is secret material)"
        )
    return None


def _credential_name(value: Any) -> Any:
    if isinstance(value, dict):
        raise ValueError(
            credential_value_message("in a job document")
            + "; this field takes the credential's name, not a mapping"
        )
    problem = credential_name_problem(value)
    if problem:
        raise ValueError(problem)
    return value


#: A field naming a credential of the stack's secret store (see the module docstring).
CredentialName = Annotated[str, BeforeValidator(_credential_name)]


# --- external-secrets.io/v1 ExternalSecret (the part kubetrain writes and checks) --------------

_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"


class SecretStoreReference(Strict):
    """``spec.secretStoreRef``: the store the values are read from."""

    kind: Literal["SecretStore", "ClusterSecretStore"] | None = Field(
        default=None, description="Kind of the store. Default (operator's): SecretStore."
    )
    name: str | None = Field(
        default=None,
        min_length=1,
        max_length=253,
        pattern=_SUBDOMAIN,
        description="Name of the store (the CRD does not require it; the operator does).",
    )


class TemplateMetadata(Strict):
    """``spec.target.template.metadata``: labels and annotations of the created Secret."""

    labels: dict[str, str] | None = Field(default=None, description="Labels. Default: none.")
    annotations: dict[str, str] | None = Field(
        default=None, description="Annotations. Default: none."
    )
    finalizers: list[str] | None = Field(default=None, description="Finalizers. Default: none.")


class TargetTemplate(Strict):
    """``spec.target.template``: the blueprint of the created Secret."""

    type: str | None = Field(default=None, description="Secret type. Default: Opaque.")
    metadata: TemplateMetadata | None = Field(
        default=None, description="Metadata of the Secret. Default: none."
    )
    engine_version: Literal["v2"] | None = Field(
        default=None, alias="engineVersion", description="Template engine. Default: v2."
    )
    merge_policy: Literal["Replace", "Merge"] | None = Field(
        default=None, alias="mergePolicy", description="Template merge policy. Default: Replace."
    )
    data: dict[str, str] | None = Field(
        default=None,
        description="Templated Secret keys. Default: none (the fetched keys are kept as they are).",
    )
    template_from: list[dict[str, Any]] | None = Field(
        default=None, alias="templateFrom", description="Templates from ConfigMaps or Secrets."
    )


class Target(Strict):
    """``spec.target``: the Secret the operator creates."""

    name: str | None = Field(
        default=None,
        min_length=1,
        max_length=253,
        pattern=_SUBDOMAIN,
        description="Name of the Secret. Default: the ExternalSecret's name.",
    )
    creation_policy: Literal["Owner", "Orphan", "Merge", "None", "CreateOrMerge"] | None = Field(
        default=None,
        alias="creationPolicy",
        description="How the Secret is created. Default: Owner.",
    )
    deletion_policy: Literal["Delete", "Merge", "Retain"] | None = Field(
        default=None,
        alias="deletionPolicy",
        description="What happens to the Secret when the values are gone. Default: Retain.",
    )
    immutable: bool | None = Field(default=None, description="Make the Secret immutable.")
    template: TargetTemplate | None = Field(default=None, description="Blueprint of the Secret.")


class RemoteRef(Strict):
    """``spec.data[].remoteRef``: one value in the store."""

    key: str = Field(description="Key of the secret in the store (kubetrain: the credential name).")
    property: str | None = Field(
        default=None, description="Property of that secret (kubetrain: the credential's key)."
    )
    version: str | None = Field(default=None, description="Version. Default: the latest.")
    conversion_strategy: Literal["Default", "Unicode"] | None = Field(
        default=None, alias="conversionStrategy", description="Conversion. Default: Default."
    )
    decoding_strategy: Literal["Auto", "Base64", "Base64URL", "None"] | None = Field(
        default=None, alias="decodingStrategy", description="Decoding. Default: None."
    )
    metadata_policy: Literal["None", "Fetch"] | None = Field(
        default=None, alias="metadataPolicy", description="Fetch tags/labels. Default: None."
    )
    null_byte_policy: Literal["Ignore", "Fail"] | None = Field(
        default=None,
        alias="nullBytePolicy",
        description="Values holding NUL bytes. Default: Ignore.",
    )


class ExternalSecretData(Strict):
    """One key of the created Secret and where its value comes from."""

    secret_key: str = Field(
        alias="secretKey",
        min_length=1,
        max_length=253,
        pattern=r"^[-._a-zA-Z0-9]+$",
        description="Key in the created Secret.",
    )
    remote_ref: RemoteRef = Field(alias="remoteRef", description="Where the value is read.")
    source_ref: dict[str, Any] | None = Field(
        default=None, alias="sourceRef", description="Another source than secretStoreRef."
    )


class ExternalSecretSpec(Strict):
    """``spec`` of an ExternalSecret."""

    secret_store_ref: SecretStoreReference | None = Field(
        default=None, alias="secretStoreRef", description="The store to read from."
    )
    target: Target | None = Field(default=None, description="The Secret to create.")
    refresh_interval: str | None = Field(
        default=None,
        alias="refreshInterval",
        description="How often values are read again, a Go duration (the CRD does not check "
        "its form). Default: 1h0m0s.",
    )
    refresh_policy: Literal["CreatedOnce", "Periodic", "OnChange"] | None = Field(
        default=None, alias="refreshPolicy", description="When values are read. Default: Periodic."
    )
    data: list[ExternalSecretData] | None = Field(
        default=None, description="Secret keys, one store value each. Default: none."
    )
    data_from: list[dict[str, Any]] | None = Field(
        default=None, alias="dataFrom", description="Whole store secrets to copy. Default: none."
    )


@resource_kind("external-secrets.io/v1", "ExternalSecret")
class ExternalSecret(Strict):
    """An External Secrets Operator ``ExternalSecret``: a Secret whose values the operator reads
    from a store, so the manifest itself holds none (the part of the API kubetrain writes)."""

    API_VERSION: ClassVar[str] = "external-secrets.io/v1"
    KIND: ClassVar[str] = "ExternalSecret"

    api_version: Literal["external-secrets.io/v1"] = Field(alias="apiVersion")
    kind: Literal["ExternalSecret"]
    metadata: Annotated[
        dict[str, Any], K8sType("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "Metadata")
    ]
    spec: ExternalSecretSpec | None = None
