//go:build !unix

package secrets

import "io/fs"

// checkPrivate: Windows files carry ACLs, not Unix modes; the data directory
// under %APPDATA% is the user's own.
func checkPrivate(string, fs.FileInfo) error { return nil }
