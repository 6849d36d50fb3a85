package autostart

import (
	"errors"
	"testing"

	"golang.org/x/sys/windows/registry"
)

// TestRunKey enables, reads back and disables the HKCU Run-key entry. It
// puts back whatever value was there before (under the Wine lane the
// prefix's registry is fresh and throwaway).
func TestRunKey(t *testing.T) {
	if k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.QUERY_VALUE); err == nil {
		if old, _, err := k.GetStringValue(Name); err == nil {
			t.Cleanup(func() {
				if k, _, err := registry.CreateKey(registry.CURRENT_USER, runKey, registry.SET_VALUE); err == nil {
					k.SetStringValue(Name, old)
					k.Close()
				}
			})
		}
		k.Close()
	}
	a, err := New(Env{GOOS: "windows"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `HKCU\` + runKey + `\` + Name; a.Where() != want {
		t.Errorf("Where() = %s, want %s", a.Where(), want)
	}
	if err := a.Disable(); err != nil {
		t.Fatal(err)
	}
	if on, err := a.Enabled(); on || err != nil {
		t.Fatalf("Enabled() before = %v, %v", on, err)
	}
	cmd := []string{`C:\Program Files\Switchboard\switchboard-tray.exe`, "--home", `C:\data\my "home"`, "100%"}
	if err := a.Enable(cmd); err != nil {
		t.Fatal(err)
	}
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.QUERY_VALUE)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := k.GetStringValue(Name)
	k.Close()
	want := `"C:\Program Files\Switchboard\switchboard-tray.exe" --home "C:\data\my \"home\"" 100%`
	if err != nil || got != want {
		t.Errorf("Run value = %q, %v; want %q", got, err, want)
	}
	if on, err := a.Enabled(); !on || err != nil {
		t.Errorf("Enabled() after Enable = %v, %v", on, err)
	}
	if err := a.Disable(); err != nil {
		t.Fatal(err)
	}
	if on, err := a.Enabled(); on || err != nil {
		t.Errorf("Enabled() after Disable = %v, %v", on, err)
	}
	k, err = registry.OpenKey(registry.CURRENT_USER, runKey, registry.QUERY_VALUE)
	if err == nil {
		_, _, err = k.GetStringValue(Name)
		k.Close()
	}
	if !errors.Is(err, registry.ErrNotExist) {
		t.Errorf("the value is still there after Disable: %v", err)
	}
	if err := a.Disable(); err != nil {
		t.Errorf("second Disable: %v", err)
	}
	if err := a.Enable(nil); err == nil {
		t.Error("Enable(nil) succeeded")
	}
}
