package redact

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		// secret: a word, a name part, case-insensitive, any separator
		"token": true, "Token": true, "githubToken": true, "GITHUB_TOKEN": true, "access_token": true,
		"key": true, "apiKey": true, "api_key": true, "APIKey": true, "apikey": true, "APIKEY": true,
		"x-api-key": true, "X-API-Key": true, "X-Api-Key": true, "x-goog-api-key": true,
		"Ocp-Apim-Subscription-Key": true, "privateKey": true, "password": true, "db.password": true,
		"passwd": true, "secret": true, "clientSecret": true, "client_secret": true, "Authorization": true,
		"proxy-authorization": true, "auth": true, "basicAuth": true, "cookie": true, "Set-Cookie": true,
		"credential": true, "credentials": true, "awsCredentials": true, "secrets": true, "passphrase": true,
		"oauth2Token": true, "token2": true, "sessionKey": true, "GITHUB_PERSONAL_ACCESS_TOKEN": true,
		"BRAVE_API_KEY": true, "--api-key": true, "DB_PASSWORD": true, "CLIENT_SECRET": true,
		"GITLAB_PAT": true, "DB_PWD": true, "AWS_SECRET_ACCESS_KEY": true,
		"PGPASSWORD": true, "ADMINPASSWD": true, "appsecret": true, "NPMTOKEN": true, "authtoken": true,
		// kept: look-alikes and harmless plurals
		"keyboard": false, "monkey": false, "keyword": false, "keys": false, "tokens": false,
		"max_tokens": false, "maxTokens": false, "tokenizer": false, "author": false, "authors": false,
		"secretary": false, "passage": false, "cookiecutter": false, "path": false, "": false,
		"oauth": false, "turkey": false, "donkey_count": false, "PWD": false, "MEMORY_FILE_PATH": false,
		"SLACK_TEAM_ID": false, "GITLAB_API_URL": false, "--port": false, "patch": false, "pattern": false,
		"passwordless": false, "secretariat": false, "tokenless": false,
	} {
		if got := SecretName(name); got != want {
			t.Errorf("SecretName(%q) = %v, want %v", name, got, want)
		}
		if want && !MaybeSecretName([]byte(name)) {
			t.Errorf("MaybeSecretName(%q) = false for a secret name", name)
		}
	}
}

// TestMaybeSecretNameKnowsEveryWord checks the quick test against the
// rule's own words: each must pass it, alone and inside a longer name.
func TestMaybeSecretNameKnowsEveryWord(t *testing.T) {
	words := append([]string(nil), secretEndings...)
	for w := range secretWords {
		words = append(words, w)
	}
	for w := range secretSuffixWords {
		words = append(words, w)
	}
	for _, w := range words {
		for _, name := range []string{w, strings.ToUpper(w), "my_" + w + "_2", "x" + w} {
			if !MaybeSecretName([]byte(name)) {
				t.Errorf("MaybeSecretName(%q) = false, and %q is a secret word", name, w)
			}
		}
	}
	for _, name := range []string{"content", "type", "text", "query", "uri", "mimeType", "limit", "p", "to", "ke", ""} {
		if MaybeSecretName([]byte(name)) {
			t.Errorf("MaybeSecretName(%q) = true, want false", name)
		}
	}
}

func TestEachPart(t *testing.T) {
	for in, want := range map[string][]string{
		"githubToken":  {"github", "Token"},
		"x-api-key":    {"x", "api", "key"},
		"APIKey":       {"API", "Key"},
		"XMLHttpToken": {"XML", "Http", "Token"},
		"oauth2Token":  {"oauth2", "Token"},
		"__a__b":       {"a", "b"},
		"ÆbleKey":      {"Æble", "Key"},
	} {
		var got []string
		eachPart(in, func(p string) { got = append(got, p) })
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("eachPart(%q) (-want +got):\n%s", in, diff)
		}
	}
}

// Credentials of the well-known shapes, made up.
const (
	openAI     = "sk-abcdefghijklmnopqrstuvwxyz0123456789ABCD"
	openAIProj = "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56_Qr78-St90"
	anthropic  = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-abcdEFGH"
	githubPAT  = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
	githubOAU  = "gho_16C7e42F292c6912E7710c838347Ae178B4a"
	githubApp  = "ghs_16C7e42F292c6912E7710c838347Ae178B4a"
	githubFine = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWX"
	slackBot   = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	slackUser  = "xoxp-123456789012-1234567890123-1234567890123-abcdef0123456789abcdef0123456789"
	awsKey     = "AKIAIOSFODNN7EXAMPLE"
	awsTemp    = "ASIAY34FZKBOKMUTVV7A"
	jwt        = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	pemKey     = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MaRdp9\nq4GhZzRk2Y=\n-----END RSA PRIVATE KEY-----"
)

func TestValues(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// each shape, alone and inside text
		{openAI, Redacted},
		{openAIProj, Redacted},
		{anthropic, Redacted},
		{githubPAT, Redacted},
		{githubOAU, Redacted},
		{githubApp, Redacted},
		{githubFine, Redacted},
		{slackBot, Redacted},
		{slackUser, Redacted},
		{awsKey, Redacted},
		{awsTemp, Redacted},
		{jwt, Redacted},
		{pemKey, Redacted},
		{"key=" + openAI + "; next", "key=" + Redacted + "; next"},
		{"export GITHUB_TOKEN=" + githubPAT + "\n", "export GITHUB_TOKEN=" + Redacted + "\n"},
		{"Authorization: Bearer " + jwt, "Authorization: Bearer " + Redacted},
		{"authorization: bearer abc123def456", "authorization: bearer " + Redacted},
		{"BEARER\tAbCdEfGhIjKlMnOpQrStUv", "BEARER\t" + Redacted},
		{"id " + awsKey + ", region", "id " + Redacted + ", region"},
		{"two: " + githubPAT + " and " + slackBot + ".", "two: " + Redacted + " and " + Redacted + "."},
		{"before\n" + pemKey + "\nafter", "before\n" + Redacted + "\nafter"},
		{"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC", Redacted}, // cut off: to the end
		{"-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAAA\\n-----END OPENSSH PRIVATE KEY-----\"}",
			Redacted + `"}`}, // in JSON text, escaped line breaks
		{`{"text":"line\n` + githubPAT + `"}`, `{"text":"line\n` + Redacted + `"}`},
		{"(" + openAI + ")", "(" + Redacted + ")"},
		{"postgresql://me:hunter2@localhost/db", "postgresql://me:" + Redacted + "@localhost/db"},
		{`{"url":"mongodb+srv://app:p%40ss:w0rd@cluster0.example.net/?x=1"}`, `{"url":"mongodb+srv://app:` + Redacted + `@cluster0.example.net/?x=1"}`},
		{"redis://:only-pw@cache:6379 and https://u:" + Redacted + "@h", "redis://:" + Redacted + "@cache:6379 and https://u:" + Redacted + "@h"},

		// kept: look-alikes and words
		{"", ""},
		{"https://user@host.example/x http://[::1]:7391/mcp ssh://git@github.com:22/o/r a://b:@c", "https://user@host.example/x http://[::1]:7391/mcp ssh://git@github.com:22/o/r a://b:@c"},
		{"http://host:8080/path?q=a:b@c mail: me@example.com", "http://host:8080/path?q=a:b@c mail: me@example.com"},
		{"plain text with no secrets", "plain text with no secrets"},
		{"task-force sk-short ask-abcdefghijklmnopqrstuvwxyz", "task-force sk-short ask-abcdefghijklmnopqrstuvwxyz"},
		{"ghp_short and xghp_16C7e42F292c6912E7710c838347Ae178B4a", "ghp_short and xghp_16C7e42F292c6912E7710c838347Ae178B4a"},
		{"xoxz-1234567890123 xoxb-short", "xoxz-1234567890123 xoxb-short"},
		{"AKIAIOSFODNN7EXAMPLEX AKIA1234 MAKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLEX AKIA1234 MAKIAIOSFODNN7EXAMPLE"},
		{"eyJhbGciOi only one part, eyJabc.def.ghi", "eyJhbGciOi only one part, eyJabc.def.ghi"},
		{"a bearer token; the Bearer scheme; bearer authentication", "a bearer token; the Bearer scheme; bearer authentication"},
		{"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"},
		{"-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----"},
		{"skip the desk-abcdefghijklmnopqrstuvwxyz", "skip the desk-abcdefghijklmnopqrstuvwxyz"},
	} {
		got := Values(tc.in)
		if got != tc.want {
			t.Errorf("Values(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
		if has := HasSecretValue(tc.in); has != (got != tc.in) {
			t.Errorf("HasSecretValue(%q) = %v, but Values changed it: %v", tc.in, has, got != tc.in)
		}
	}
}

func TestValuesKeepsUnchangedString(t *testing.T) {
	s := strings.Repeat("nothing secret here, ", 100)
	if got := Values(s); got != s {
		t.Fatalf("Values changed text without a secret")
	}
	if n := testing.AllocsPerRun(10, func() { Values(s) }); n != 0 {
		t.Errorf("Values allocates %v times for text without a secret", n)
	}
}

func FuzzValues(f *testing.F) {
	for _, seed := range []string{"", openAI, "x " + githubPAT, pemKey, "Bearer " + jwt, "-----BEGIN PRIVATE KEY-----",
		"-----BEGIN X PRIVATE KEY-----\\n-----END ", "\\ngho_", "AKIA", "bearer  \t", "eyJ" + strings.Repeat("a", 10) + ".b"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Values(s)
		if HasSecretValue(out) {
			t.Errorf("Values(%q) = %q still holds a secret", s, out)
		}
		if out == s && HasSecretValue(s) {
			t.Errorf("Values(%q) left it unchanged although it holds a secret", s)
		}
	})
}
