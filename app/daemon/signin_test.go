package daemon

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/remoteauth"
	"github.com/switchboardhq/switchboard/app/secrets"
)

// mapSecrets is a secret store of server → key → value.
type mapSecrets map[string]map[string]string

func (m mapSecrets) Get(server, key string) (string, error) {
	if v, ok := m[server][key]; ok {
		return v, nil
	}
	return "", secrets.ErrNotFound
}
func (m mapSecrets) Set(server, key, value string) error { return errors.New("read only") }
func (m mapSecrets) Delete(server, key string) error     { return errors.New("read only") }

// A remote's oauth key becomes the sign-in's registration, its client
// secret read from the secret store under the name config.json gives; a
// missing secret is an error naming the field and the secret, never a
// sign-in with another client.
func TestSignInRegistration(t *testing.T) {
	s := &signIns{secrets: mapSecrets{"r": {"client-secret": "s3cr3t"}}}
	for _, tt := range []struct {
		name  string
		oauth *config.OAuth
		want  remoteauth.Registration
		err   string
	}{
		{"none", nil, remoteauth.Registration{}, ""},
		{"public client", &config.OAuth{ClientID: "abc", Scopes: []string{"read"}},
			remoteauth.Registration{ClientID: "abc", Scopes: []string{"read"}}, ""},
		{"confidential client", &config.OAuth{ClientID: "abc", ClientSecret: "client-secret"},
			remoteauth.Registration{ClientID: "abc", ClientSecret: "s3cr3t"}, ""},
		{"metadata document", &config.OAuth{ClientMetadataURL: "https://example.com/sb.json"},
			remoteauth.Registration{ClientIDMetadataURL: "https://example.com/sb.json"}, ""},
		{"secret not stored", &config.OAuth{ClientID: "abc", ClientSecret: "other"}, remoteauth.Registration{},
			`servers.r.oauth.clientSecret names "other"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.registration("r", tt.oauth)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, secrets.ErrNotFound) {
					t.Fatalf("registration = %+v, %v; want an error with %q", got, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("registration (-want +got):\n%s", diff)
			}
		})
	}
}
