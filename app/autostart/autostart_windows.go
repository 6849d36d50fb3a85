//go:build windows

package autostart

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/windows/registry"
)

// runKey is where per-user programs to start at login are listed.
const runKey = `Software\Microsoft\Windows\CurrentVersion\Run`

// registryAutostart is a value under HKCU\...\Run.
type registryAutostart struct{}

func newRegistryAutostart() (Entry, error) { return registryAutostart{}, nil }

func (registryAutostart) Where() string { return `HKCU\` + runKey + `\` + Name }

func (registryAutostart) Enabled() (bool, error) {
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.QUERY_VALUE)
	if errors.Is(err, registry.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("opening HKCU\\%s: %w", runKey, err)
	}
	defer k.Close()
	_, _, err = k.GetStringValue(Name)
	if errors.Is(err, registry.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading HKCU\\%s\\%s: %w", runKey, Name, err)
	}
	return true, nil
}

func (registryAutostart) Enable(command []string) error {
	if len(command) == 0 {
		return errors.New("autostart: empty command")
	}
	k, _, err := registry.CreateKey(registry.CURRENT_USER, runKey, registry.SET_VALUE)
	if err != nil {
		return fmt.Errorf("opening HKCU\\%s: %w", runKey, err)
	}
	defer k.Close()
	if err := k.SetStringValue(Name, windowsCommandLine(command)); err != nil {
		return fmt.Errorf("writing HKCU\\%s\\%s: %w", runKey, Name, err)
	}
	return nil
}

func (registryAutostart) Disable() error {
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.SET_VALUE)
	if errors.Is(err, registry.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("opening HKCU\\%s: %w", runKey, err)
	}
	defer k.Close()
	if err := k.DeleteValue(Name); err != nil && !errors.Is(err, registry.ErrNotExist) {
		return fmt.Errorf("removing HKCU\\%s\\%s: %w", runKey, Name, err)
	}
	return nil
}

// windowsCommandLine quotes each argument that needs it.
func windowsCommandLine(command []string) string {
	parts := make([]string, len(command))
	for i, a := range command {
		if a != "" && !strings.ContainsAny(a, " \t\"") {
			parts[i] = a
			continue
		}
		parts[i] = `"` + strings.ReplaceAll(a, `"`, `\"`) + `"`
	}
	return strings.Join(parts, " ")
}
