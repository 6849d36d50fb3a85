package mediatype

import "testing"

func TestIsJSON(t *testing.T) {
	for _, tt := range []struct {
		ct   string
		want bool
	}{
		{"application/json", true},
		{"application/json; charset=utf-8", true},
		{"Application/JSON", true},
		{" application/json ", true},
		{"", false},
		{"text/plain", false},
		{"application/json-seq", false},
		{"application/jsonx", false},
		{"application/json; charset", false}, // a parameter without a value
		{"application/*", false},
	} {
		if got := IsJSON(tt.ct); got != tt.want {
			t.Errorf("IsJSON(%q) = %v, want %v", tt.ct, got, tt.want)
		}
	}
}
