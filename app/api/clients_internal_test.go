package api

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/switchboardhq/switchboard/app/clients"
)

// editorMessage words the clients package's errors as the API always has:
// the package's message, and the flag of `switchboard clients` that gets
// past it, wherever the error sits in the chain.
func TestEditorMessage(t *testing.T) {
	conflict := &clients.ConflictError{Path: "/h/.cursor/mcp.json",
		Conflicts: []clients.Conflict{{Name: "switchboard", Target: "runs other"}, {Name: "switchboard-fs", Target: "https://x/mcp"}}}
	readOnly := &clients.ReadOnlyError{Path: "/h/.cursor/mcp.json", Mode: 0o444}
	folder := &clients.ReadOnlyError{Path: "/h/.cursor/mcp.json", Folder: true, Mode: fs.ModeDir | 0o555}
	chmod := &clients.MakeWritableError{Dir: "/h/.cursor", Err: fs.ErrPermission}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"conflict", conflict, `/h/.cursor/mcp.json already has "switchboard" (runs other) and "switchboard-fs" (https://x/mcp), ` +
			"which Switchboard did not write; it was left as it is (rename it, or replace it: --replace on the command line)"},
		{"read-only file", readOnly, "/h/.cursor/mcp.json is read-only (the file has mode 0444): " +
			"Switchboard does not change a file someone made read-only; make it writable, or pass --force to change it anyway"},
		{"read-only folder, wrapped", fmt.Errorf("cursor: %w", folder), "cursor: /h/.cursor/mcp.json is read-only (its folder has mode 0555): " +
			"Switchboard does not change a file someone made read-only; make it writable, or pass --force to change it anyway"},
		{"chmod, wrapped", fmt.Errorf("writing x: %w", chmod), "writing x: making /h/.cursor writable (--force): permission denied"},
		{"another error", errors.New("reading x: boom"), "reading x: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := editorMessage(tt.err); got != tt.want {
				t.Errorf("editorMessage =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// An import that replaces the client's entries has no --force: its advice
// on a read-only file is to make it writable and import again.
func TestImportEditorMessage(t *testing.T) {
	readOnly := &clients.ReadOnlyError{Path: "/h/.cursor/mcp.json", Mode: 0o444}
	want := "cursor: /h/.cursor/mcp.json is read-only (the file has mode 0444): " +
		"Switchboard does not change a file someone made read-only; make it writable and import again"
	if got := importEditorMessage(fmt.Errorf("cursor: %w", readOnly)); got != want {
		t.Errorf("importEditorMessage =\n%s\nwant\n%s", got, want)
	}
	if got := importEditorMessage(errors.New("reading x: boom")); got != "reading x: boom" {
		t.Errorf("importEditorMessage(another error) = %s", got)
	}
}

// skipMessage adds to the clients package's reason for leaving an entry
// alone the command line that adds the server by hand; the package's own
// reasons name no flag.
func TestSkipMessage(t *testing.T) {
	tests := []struct {
		sk   clients.SkippedEntry
		want string
	}{
		{clients.SkippedEntry{Name: "a", Reason: "it is Switchboard's own entry"}, "it is Switchboard's own entry"},
		{clients.SkippedEntry{Name: "b", Reason: "header X-Key takes its value from $K", ByHand: clients.ByHandSecretHeader},
			"header X-Key takes its value from $K (on the command line: `switchboard install --url URL --name NAME --secret-header NAME=VALUE`)"},
		{clients.SkippedEntry{Name: "c", Reason: "it needs its bearer token from $T", ByHand: clients.ByHandBearerToken},
			"it needs its bearer token from $T (on the command line: `switchboard install --url URL --name NAME --secret-header Authorization=\"Bearer …\"`)"},
		{clients.SkippedEntry{Name: "d", Reason: "it takes a value from a file", ByHand: clients.ByHandValue},
			"it takes a value from a file (on the command line: `switchboard install --url URL --name NAME`, with --header or --secret-header)"},
	}
	for _, tt := range tests {
		if got := skipMessage(tt.sk); got != tt.want {
			t.Errorf("skipMessage(%s) =\n%s\nwant\n%s", tt.sk.Name, got, tt.want)
		}
	}
}
