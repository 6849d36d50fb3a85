package clients

import "github.com/switchboardhq/switchboard/app/redact"

// LooksSecret reports whether an environment variable's or a header's
// name says it holds a credential (GITHUB_TOKEN, OPENAI_API_KEY, X-Api-Key,
// x-goog-api-key, Ocp-Apim-Subscription-Key, Authorization, Cookie, in any
// case and with any separator): the rule of app/redact, shared with the
// history, the API and logs.
func LooksSecret(name string) bool { return redact.SecretName(name) }

// LooksSecretValue reports whether a value has the shape of a credential
// (sk-…, ghp_…, a JWT, "Bearer …"; see redact.HasSecretValue), whatever
// its name.
func LooksSecretValue(v string) bool { return redact.HasSecretValue(v) }

// IsSecret reports whether the variable or header name=value is to be
// masked: by its name or by the shape of its value.
func IsSecret(name, value string) bool {
	return LooksSecret(name) || LooksSecretValue(value)
}

// MaskSecrets returns a copy of m with the values of its secret entries
// (see IsSecret) replaced by mask.
func MaskSecrets(m map[string]string, mask string) map[string]string {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if v != "" && IsSecret(k, v) {
			v = mask
		}
		out[k] = v
	}
	return out
}
