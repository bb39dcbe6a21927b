package proc

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
)

func TestAlive(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Error("this process is not alive")
	}
	for _, pid := range []int{0, -1} {
		if Alive(pid) {
			t.Errorf("Alive(%d) = true", pid)
		}
	}
	if runtime.GOOS == "windows" {
		return
	}
	// A process that has ended and been waited for is gone.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if Alive(cmd.Process.Pid) {
		t.Errorf("ended process %d is alive", cmd.Process.Pid)
	}
}

func TestRunning(t *testing.T) {
	self := os.Getpid()
	if !Running(self, "") {
		t.Error("this process, recorded without a start, is not running")
	}
	if !Running(self, Start(self)) {
		t.Error("this process, recorded with its start, is not running")
	}
	if Running(0, "") {
		t.Error("pid 0 is running")
	}
	if runtime.GOOS != "linux" {
		return
	}
	if Start(self) == "" {
		t.Fatal("no start for this process on Linux")
	}
	// The id of this process, recorded with another start: a process
	// that reused the id of one that ended.
	if Running(self, "another-boot:1") {
		t.Error("a live pid with another start counts as the recorded process")
	}
}
