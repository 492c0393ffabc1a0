package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// The figures that share the machine with PostgreSQL report what the
// whole machine did as well as the worker and the bench: on a machine
// whose cores are all busy, a run's rate is bound by the CPU every
// process spends on each row, PostgreSQL's included.

// hostClock is the machine's CPU time so far.
type hostClock struct {
	busy     time.Duration // all cores, neither idle nor waiting for I/O
	postgres time.Duration // PostgreSQL's processes that are running
}

// readHost samples the machine's CPU time. It is Linux only, as the
// worker's CPU time is; elsewhere it reads zero.
func readHost() hostClock { return hostClock{busy: machineBusy(), postgres: postgresCPU()} }

// machineBusy is the busy time of all the machine's cores so far.
func machineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	return procStatBusy(b)
}

// procStatBusy reads the busy time of the first line of /proc/stat, "cpu
// user nice system idle iowait irq softirq steal ...", in clock ticks.
func procStatBusy(stat []byte) time.Duration {
	line, _, _ := bytes.Cut(stat, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 5 || f[0] != "cpu" {
		return 0
	}
	var busy int64
	for i, s := range f[1:] {
		if i == 3 || i == 4 || i >= 8 {
			// idle, iowait; guest time is already counted in user.
			continue
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0
		}
		busy += n
	}
	return ticks(busy)
}

// postgresCPU is the CPU time used by the processes named postgres: the
// server and its backends. A backend that ends during a run takes its
// time with it; the run reads it with procCPU before closing it.
func postgresCPU() time.Duration {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var total time.Duration
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if comm, err := os.ReadFile("/proc/" + e.Name() + "/comm"); err != nil || string(bytes.TrimSpace(comm)) != "postgres" {
			continue
		}
		if d, err := procCPU(pid); err == nil {
			total += d
		}
	}
	return total
}

// procCPU reads the CPU time (user + system, all threads) a process has
// used from /proc/<pid>/stat.
func procCPU(pid int) (time.Duration, error) {
	st, err := readProcStat(pid)
	return st.user + st.system, err
}

// procStat is what /proc/<pid>/stat says a process (all its threads) has
// used so far.
type procStat struct {
	user, system time.Duration
	// Minor page faults: pages the process touched for the first time
	// (a growing heap, say), each a trip through the kernel.
	faults int64
}

func readProcStat(pid int) (procStat, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	// The command name (field 2) may hold spaces; fields after it start
	// with the state (field 3). minflt is field 10, utime and stime are
	// fields 14 and 15.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procStat{}, errors.New("malformed /proc/<pid>/stat")
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return procStat{}, errors.New("short /proc/<pid>/stat")
	}
	var n [3]int64
	for j, k := range []int{7, 11, 12} {
		if n[j], err = strconv.ParseInt(f[k], 10, 64); err != nil {
			return procStat{}, err
		}
	}
	return procStat{faults: n[0], user: ticks(n[1]), system: ticks(n[2])}, nil
}

// ticks converts clock ticks of /proc (USER_HZ, 100 on Linux) to time.
func ticks(n int64) time.Duration {
	const userHZ = 100
	return time.Duration(n) * time.Second / userHZ
}
