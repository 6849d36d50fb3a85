package config

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// OAuth is a remote server's "oauth" key: how Switchboard identifies itself
// to the server's authorization server when it signs in. Without it (nil)
// Switchboard uses a Client ID Metadata Document where the server supports
// one and clientMetadataUrl is set, else registers itself dynamically.
//
//	"oauth": {"clientId": "abc", "clientSecret": "linear-client-secret",
//	          "scopes": ["read"], "clientMetadataUrl": "https://example.com/switchboard.json"}
type OAuth struct {
	// ClientID is a client the user registered with the authorization
	// server beforehand.
	ClientID string `json:"clientId,omitempty"`
	// ClientSecret is the name of a secret, in the secret store under the
	// server's name, holding that client's secret (never the secret
	// itself). Empty for a public client.
	ClientSecret string `json:"clientSecret,omitempty"`
	// Scopes are asked for at every sign-in, in addition to the ones the
	// server advertises or asks for.
	Scopes []string `json:"scopes,omitempty"`
	// ClientMetadataURL is the https URL of a Client ID Metadata Document
	// that is the client's id, for authorization servers that support them.
	ClientMetadataURL string `json:"clientMetadataUrl,omitempty"`
}

func (o *OAuth) isZero() bool {
	return o == nil || (o.ClientID == "" && o.ClientSecret == "" && len(o.Scopes) == 0 && o.ClientMetadataURL == "")
}

func (p *parser) oauth(field string, off int, raw []byte) (*OAuth, error) {
	const want = `an object like {"clientId": "...", "clientSecret": "secret-name", "scopes": ["..."], "clientMetadataUrl": "https://..."}`
	ms, err := p.object(field, off, raw, want)
	if err != nil {
		return nil, err
	}
	o := &OAuth{}
	for _, m := range ms {
		f := join(field, m.key)
		switch m.key {
		case "clientId":
			err = p.scalar(f, m.valOff, m.val, &o.ClientID, "a string")
		case "clientSecret":
			// The name of a secret; a user may paste the secret itself, so
			// an error does not quote it.
			if !isNull(m.val) && (len(m.val) == 0 || m.val[0] != '"' || p.scalar(f, m.valOff, m.val, &o.ClientSecret, "") != nil) {
				err = p.secretTypeError(f, m.valOff, m.val, "the name of a secret in the secret store (a string)")
			}
		case "scopes":
			o.Scopes, err = p.strings(f, m.valOff, m.val)
		case "clientMetadataUrl":
			err = p.scalar(f, m.valOff, m.val, &o.ClientMetadataURL, "a string")
		default:
			// Not kept as an unknown key: a misspelt "clientID" would make
			// the sign-in register another client without a word.
			err = p.typeError(f, m.valOff, m.val, "one of clientId, clientSecret, scopes, clientMetadataUrl")
		}
		if err != nil {
			return nil, err
		}
	}
	if o.isZero() {
		return nil, nil
	}
	return o, nil
}

// validate checks the oauth key of a remote server: a clientSecret names a
// secret (as secretHeaders do) and needs a clientId; scopes are OAuth
// scope tokens; clientMetadataUrl is https:// with a path and no fragment
// (what the Client ID Metadata Document draft requires of a client id).
func (o *OAuth) validate(field string) *Error {
	if o == nil {
		return nil
	}
	if strings.TrimSpace(o.ClientID) != o.ClientID || strings.ContainsFunc(o.ClientID, isControl) {
		return invalid(field+".clientId", "invalid client id %q: no surrounding spaces or control characters", o.ClientID)
	}
	if o.ClientSecret != "" {
		if o.ClientID == "" {
			return invalid(field+".clientSecret", "a client secret needs the clientId it belongs to")
		}
		if len(o.ClientSecret) > 256 || strings.ContainsAny(o.ClientSecret, "/\x00") {
			// Not quoted: it may be the secret itself.
			return invalid(field+".clientSecret", "invalid secret name: use 1 to 256 bytes without '/' or NUL, the name of the secret in the secret store")
		}
	}
	for i, sc := range o.Scopes {
		if sc == "" || strings.ContainsFunc(sc, func(r rune) bool { return r <= ' ' || r == '"' || r == '\\' || r > '~' }) {
			return invalid(field+".scopes["+strconv.Itoa(i)+"]", "invalid scope %q: a scope is printable ASCII without spaces, '\"' or '\\'", sc)
		}
	}
	if raw := o.ClientMetadataURL; raw != "" {
		u, err := url.Parse(raw)
		switch {
		case err != nil:
			return invalid(field+".clientMetadataUrl", "invalid URL %q: %v", raw, err)
		case u.Scheme != "https" || u.Hostname() == "":
			return invalid(field+".clientMetadataUrl", "invalid URL %q: a client metadata document is served over https://", raw)
		case u.Path == "" || u.Path == "/":
			return invalid(field+".clientMetadataUrl", "invalid URL %q: it needs a path (the document's)", raw)
		case u.Fragment != "" || u.User != nil:
			return invalid(field+".clientMetadataUrl", "invalid URL %q: a client id has no #fragment and no user name", raw)
		}
	}
	return nil
}

func isControl(r rune) bool { return r < ' ' || r == 0x7f }

func (o *OAuth) appendJSON(b []byte) []byte {
	w := objectWriter{b: append(b, '{')}
	if o.ClientID != "" {
		w.key("clientId")
		w.b = appendString(w.b, o.ClientID)
	}
	if o.ClientSecret != "" {
		w.key("clientSecret")
		w.b = appendString(w.b, o.ClientSecret)
	}
	if len(o.Scopes) > 0 {
		w.key("scopes")
		w.b = appendStrings(w.b, o.Scopes)
	}
	if o.ClientMetadataURL != "" {
		w.key("clientMetadataUrl")
		w.b = appendString(w.b, o.ClientMetadataURL)
	}
	return append(w.b, '}')
}

func (o *OAuth) clone() *OAuth {
	if o == nil {
		return nil
	}
	out := *o
	out.Scopes = slices.Clone(o.Scopes)
	return &out
}
