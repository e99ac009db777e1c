package framework

import (
	"bytes"
	"os"
	"strconv"
)

// ProcessesMentioning returns the pids of the live processes whose command
// line contains text, such as a data directory: what a test checks to
// prove that processes it did not start itself are gone. Zombies, whose
// command line is empty, do not count.
func ProcessesMentioning(text string) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue // gone meanwhile
		}
		if bytes.Contains(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}), []byte(text)) {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}
