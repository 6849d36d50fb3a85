package config

// A dirWatcher reports the name (base name) of the one file of a
// directory it watches whenever that file may have changed, and its
// errors; after an error some changes may not have been reported. The
// directory's other files are not reported: the data directory holds the
// call journal and the history database beside config.json, written on
// every call. newDirWatcher(dir, name) makes one: on Linux
// it listens to inotify for the events that end a change only
// (dirwatch_linux.go), elsewhere it is fsnotify's (dirwatch_other.go).
type dirWatcher interface {
	Names() <-chan string
	Errors() <-chan error
	Close() error
}
