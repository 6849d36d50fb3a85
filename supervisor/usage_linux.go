package supervisor

import (
	"bytes"
	"context"
	"os"
	"strconv"

	"github.com/shirou/gopsutil/v3/process"
)

// childrenByParent maps each pid to its children's pids, from
// /proc/<pid>/stat. It holds no handle on any process: gopsutil's process
// list calls os.FindProcess for each one, which opens a pidfd that only the
// garbage collector closes, and a daemon sampling every 2 s on a machine
// with hundreds of processes was seen holding thousands of them. Each file
// read here is opened and closed at once.
func childrenByParent(ctx context.Context) map[int32][]int32 {
	dir, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer dir.Close()
	children := make(map[int32][]int32)
	for {
		names, err := dir.Readdirnames(256)
		for _, name := range names {
			pid, err := strconv.ParseInt(name, 10, 32)
			if err != nil {
				continue // not a process: /proc/self, /proc/meminfo, ...
			}
			if ppid, ok := readPPID(name); ok {
				children[ppid] = append(children[ppid], int32(pid))
			}
		}
		if err != nil || ctx.Err() != nil {
			return children
		}
	}
}

// readPPID reads the parent pid from /proc/<pid>/stat: "pid (comm) state
// ppid ...", where comm may hold spaces and parentheses, so the fields are
// counted after its last ')'.
func readPPID(pid string) (int32, bool) {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, false // exited since the directory was read
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, false
	}
	fields := bytes.Fields(data[i+1:])
	if len(fields) < 2 {
		return 0, false
	}
	ppid, err := strconv.ParseInt(string(fields[1]), 10, 32)
	return int32(ppid), err == nil
}

// processOf returns gopsutil's view of pid for its figures (memory, CPU
// times), which it reads from /proc. It is made without
// process.NewProcess, whose existence check opens a pidfd (see
// childrenByParent); the pid's /proc entry is checked instead.
func processOf(_ context.Context, pid int32) (*process.Process, error) {
	if _, err := os.Stat("/proc/" + strconv.Itoa(int(pid))); err != nil {
		return nil, err
	}
	return &process.Process{Pid: pid}, nil
}
