package proc

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// Start identifies the process pid beyond its id, which the system
// gives again once the process ends: the boot it runs in
// (/proc/sys/kernel/random/boot_id) and its start time in clock ticks
// since that boot (field 22 of /proc/<pid>/stat). "" when it cannot be
// read (no such process, no /proc).
func Start(pid int) string {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// Field 2, the command's name in parentheses, may hold spaces and
	// parentheses itself: the fields after it follow its last ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return ""
	}
	fields := strings.Fields(string(stat[i+1:]))
	// fields[0] is field 3 (state), so field 22 is fields[19].
	if len(fields) < 20 {
		return ""
	}
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(boot)) + ":" + fields[19]
}
