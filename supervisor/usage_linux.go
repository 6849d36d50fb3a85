package supervisor

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strconv"

	"github.com/shirou/gopsutil/v3/process"
)

// childrenByParent maps each process of the trees rooted at roots to its
// children's pids. Where the kernel lists a thread's children
// (/proc/<pid>/task/<tid>/children, CONFIG_PROC_CHILDREN, as Debian's,
// Ubuntu's and Fedora's kernels do) it reads those of the trees' processes
// only, so that a sample costs what the servers run rather than what the
// machine does: the scan of every process (allChildren) was 4 system calls
// a process on the machine every 2 s. Elsewhere it scans.
func childrenByParent(ctx context.Context, roots []int32) map[int32][]int32 {
	if !listsThreadChildren() {
		return allChildren(ctx)
	}
	children := make(map[int32][]int32)
	queue := slices.Clone(roots)
	for len(queue) > 0 && ctx.Err() == nil {
		pid := queue[0]
		queue = queue[1:]
		if _, seen := children[pid]; seen {
			continue
		}
		kids := threadChildren(pid)
		children[pid] = kids
		queue = append(queue, kids...)
	}
	return children
}

// listsThreadChildren reports whether the kernel lists a thread's
// children (its own main thread's file is there).
func listsThreadChildren() bool {
	self := strconv.Itoa(os.Getpid())
	_, err := os.Stat("/proc/" + self + "/task/" + self + "/children")
	return err == nil
}

// threadChildren lists the children of every thread of pid (a child is
// listed under the thread that started it); none if pid has exited.
func threadChildren(pid int32) []int32 {
	task := "/proc/" + strconv.Itoa(int(pid)) + "/task/"
	dir, err := os.Open(task)
	if err != nil {
		return nil
	}
	tids, _ := dir.Readdirnames(-1)
	dir.Close()
	var kids []int32
	for _, tid := range tids {
		data, err := os.ReadFile(task + tid + "/children")
		if err != nil {
			continue // the thread exited since the directory was read
		}
		for _, field := range bytes.Fields(data) {
			if kid, err := strconv.ParseInt(string(field), 10, 32); err == nil {
				kids = append(kids, int32(kid))
			}
		}
	}
	return kids
}

// allChildren maps each pid on the machine to its children's pids, from
// /proc/<pid>/stat. It holds no handle on any process: gopsutil's process
// list calls os.FindProcess for each one, which opens a pidfd that only the
// garbage collector closes, and a daemon sampling every 2 s on a machine
// with hundreds of processes was seen holding thousands of them. Each file
// read here is opened and closed at once.
func allChildren(ctx context.Context) map[int32][]int32 {
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
// allChildren); the pid's /proc entry is checked instead.
func processOf(_ context.Context, pid int32) (*process.Process, error) {
	if _, err := os.Stat("/proc/" + strconv.Itoa(int(pid))); err != nil {
		return nil, err
	}
	return &process.Process{Pid: pid}, nil
}
