package config

// A dirWatcher reports the names (base names) of the files of one
// directory that may have changed, and its errors; after an error some
// changes may not have been reported. newDirWatcher makes one: on Linux
// it listens to inotify for the events that end a change only
// (dirwatch_linux.go), elsewhere it is fsnotify's (dirwatch_other.go).
type dirWatcher interface {
	Names() <-chan string
	Errors() <-chan error
	Close() error
}
