package supervisor

import (
	"slices"
	"testing"
)

func TestWithoutSwitchboardEnv(t *testing.T) {
	in := []string{"PATH=/bin", "SWITCHBOARD_TOKEN=sb_x", "HOME=/h", "SWITCHBOARD_HOME=/d", "SWITCHBOARDX=kept", "MY_SWITCHBOARD_TOKEN=kept", "SWITCHBOARD_=x"}
	got := WithoutSwitchboardEnv(in)
	want := []string{"PATH=/bin", "HOME=/h", "SWITCHBOARDX=kept", "MY_SWITCHBOARD_TOKEN=kept"}
	if !slices.Equal(got, want) {
		t.Errorf("WithoutSwitchboardEnv = %q, want %q", got, want)
	}
	if len(in) != 7 || in[1] != "SWITCHBOARD_TOKEN=sb_x" {
		t.Errorf("the input was changed: %q", in)
	}
}
