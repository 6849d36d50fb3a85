package main

import (
	"fmt"
	"io"
	"unsafe"

	"golang.org/x/sys/windows"
)

// procs prints every process of the prefix but itself, from a Toolhelp
// snapshot (Wine 8 has no tasklist): "pid parent-pid name" per line.
func procs(w io.Writer) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return fmt.Errorf("process snapshot: %w", err)
	}
	defer windows.CloseHandle(snap)
	var e windows.ProcessEntry32
	e.Size = uint32(unsafe.Sizeof(e))
	self := windows.GetCurrentProcessId()
	for err = windows.Process32First(snap, &e); err == nil; err = windows.Process32Next(snap, &e) {
		if e.ProcessID == self {
			continue
		}
		fmt.Fprintf(w, "%d %d %s\n", e.ProcessID, e.ParentProcessID, windows.UTF16ToString(e.ExeFile[:]))
	}
	if err != windows.ERROR_NO_MORE_FILES {
		return fmt.Errorf("walking the process snapshot: %w", err)
	}
	return nil
}
