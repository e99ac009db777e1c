package dev

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// devProcess is one process of a dev environment, as recorded in its
// state file. The start time tells the process apart from a later one that
// got the same pid.
type devProcess struct {
	// Name says what the process is: "hub", a cluster's name, or
	// "<cluster>-agent".
	Name string `json:"name"`
	// PID is the process id.
	PID int `json:"pid"`
	// StartTime is the process's start time in clock ticks since boot
	// (/proc/<pid>/stat), 0 where /proc is not available.
	StartTime uint64 `json:"startTime,omitempty"`
	// Log is the file that receives the process's output.
	Log string `json:"log"`
	// Args is the command line, for the record.
	Args []string `json:"args"`

	// logOffset is the size of Log when the process started: what it
	// printed comes after (a log is appended to across restarts).
	logOffset int64
	// exited is closed when a process this command started ends.
	exited chan struct{}
	// waitErr is what Wait returned, valid once exited is closed.
	waitErr error
}

// startDetached starts bin with args in a session of its own, with its
// output appended to logPath and no input, so that it keeps running after
// this command exits and a Ctrl-C at the terminal does not reach it.
func startDetached(name, bin, logPath string, args ...string) (*devProcess, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open log file of %s: %w", name, err)
	}
	defer logFile.Close()
	var offset int64
	if info, err := logFile.Stat(); err == nil {
		offset = info.Size()
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin = nil
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (%s): %w", name, bin, err)
	}
	p := &devProcess{
		Name:      name,
		PID:       cmd.Process.Pid,
		Log:       logPath,
		Args:      append([]string{bin}, args...),
		logOffset: offset,
		exited:    make(chan struct{}),
	}
	p.StartTime, _ = procStartTime(p.PID)
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// hasExited reports whether a process this command started has ended.
func (p *devProcess) hasExited() bool {
	if p.exited == nil {
		return !p.alive()
	}
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// alive reports whether the recorded process still runs. A zombie, or a
// process that took over the pid later, does not count.
func (p *devProcess) alive() bool {
	if p.PID <= 0 {
		return false
	}
	if p.exited != nil {
		select {
		case <-p.exited:
			return false
		default:
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.PID))
	if errors.Is(err, os.ErrNotExist) && procAvailable() {
		return false
	}
	if err == nil {
		state, start, err := parseProcStat(stat)
		if err != nil {
			return false
		}
		return state != "Z" && state != "X" && (p.StartTime == 0 || start == p.StartTime)
	}
	return syscall.Kill(p.PID, 0) == nil
}

// signal sends sig to the process's session (it leads one).
func (p *devProcess) signal(sig syscall.Signal) {
	if !p.alive() {
		return
	}
	if err := syscall.Kill(-p.PID, sig); err != nil {
		_ = syscall.Kill(p.PID, sig)
	}
}

// waitGone waits until the process has ended, or ctx or the timeout ends.
func (p *devProcess) waitGone(ctx context.Context, timeout time.Duration) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for p.alive() {
		select {
		case <-p.exited:
		case <-tick.C:
		case <-deadline.C:
			return !p.alive()
		case <-ctx.Done():
			return !p.alive()
		}
	}
	return true
}

// stop ends the process: SIGTERM, then SIGKILL after grace. It reports
// whether the process had to be killed.
func (p *devProcess) stop(ctx context.Context, grace time.Duration) (killed bool) {
	if !p.alive() {
		return false
	}
	p.signal(syscall.SIGTERM)
	if p.waitGone(ctx, grace) {
		return false
	}
	p.signal(syscall.SIGKILL)
	p.waitGone(context.WithoutCancel(ctx), 10*time.Second)
	return true
}

// exitRecordWait bounds how long exitDescription waits for Wait to record
// how a process that is gone ended.
const exitRecordWait = 5 * time.Second

// exitDescription says how a process this command started ended. A
// process is gone (a zombie, for alive) a moment before Wait has reaped it
// and recorded how it ended: that is waited for.
func (p *devProcess) exitDescription() string {
	select {
	case <-p.exited:
	case <-time.After(exitRecordWait):
		return "ended; how is not known yet"
	}
	var exitErr *exec.ExitError
	switch {
	case p.waitErr == nil:
		return "exited with code 0"
	case errors.As(p.waitErr, &exitErr):
		return exitErr.ProcessState.String()
	default:
		return p.waitErr.Error()
	}
}

// logTail returns the last n lines of the process's log.
func (p *devProcess) logTail(n int) string {
	return tailFile(p.Log, n)
}

// rss returns the process's resident memory in bytes, 0 if unknown.
func (p *devProcess) rss() int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		var kb int64
		if _, err := fmt.Sscanf(line, "VmRSS: %d kB", &kb); err == nil {
			return kb * 1024
		}
	}
	return 0
}

// tailFile returns the last n lines of a file, without a final newline.
func tailFile(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// indent prefixes every line of s.
func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// procAvailable reports whether /proc describes processes here.
func procAvailable() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}

// procStartTime reads a process's start time from /proc.
func procStartTime(pid int) (uint64, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	_, start, err := parseProcStat(stat)
	return start, err
}

// parseProcStat returns the state (field 3) and start time (field 22) of
// /proc/<pid>/stat. The command name (field 2) may hold spaces and
// parentheses, so fields are counted from its closing parenthesis.
func parseProcStat(stat []byte) (state string, start uint64, err error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return "", 0, errors.New("malformed /proc stat")
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 20 {
		return "", 0, errors.New("malformed /proc stat")
	}
	start, err = strconv.ParseUint(fields[19], 10, 64)
	return fields[0], start, err
}

// waitForLine waits until the process's log contains line, and fails
// early, with the log's last lines, when the process exits first.
func (p *devProcess) waitForLine(ctx context.Context, line string, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if data, err := p.logSinceStart(); err == nil && bytes.Contains(data, []byte(line)) {
			return nil
		}
		if p.hasExited() {
			return p.failure("stopped while starting")
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-deadline.C:
			return fmt.Errorf("%s did not start within %s; the last lines of %s:\n%s", p.Name, timeout, p.Log, indent(p.logTail(logTailLines), "  "))
		case <-tick.C:
		}
	}
}

// logSinceStart is what the process wrote to its log since it started.
func (p *devProcess) logSinceStart() ([]byte, error) {
	data, err := os.ReadFile(p.Log)
	if err != nil {
		return nil, err
	}
	if p.logOffset > 0 && p.logOffset <= int64(len(data)) {
		data = data[p.logOffset:]
	}
	return data, nil
}

// restart starts the recorded command line again, with the same log, and
// makes p that new process.
func (p *devProcess) restart() error {
	np, err := startDetached(p.Name, p.Args[0], p.Log, p.Args[1:]...)
	if err != nil {
		return err
	}
	*p = *np
	return nil
}

// failure is the error for a process that stopped: how it ended and the
// last lines of its log.
func (p *devProcess) failure(what string) error {
	how := "is no longer running"
	if p.exited != nil {
		how = p.exitDescription()
	}
	return fmt.Errorf("%s %s (%s); the last lines of %s:\n%s", p.Name, what, how, p.Log, indent(p.logTail(logTailLines), "  "))
}

// logTailLines is how much of a log a failure shows.
const logTailLines = 15

// findBinary finds a Flotilla binary next to the running flotilla
// executable, else on PATH.
func findBinary(name string) (string, error) {
	if self, err := os.Executable(); err == nil {
		if resolved, err := filepath.EvalSymlinks(self); err == nil {
			self = resolved
		}
		candidate := filepath.Join(filepath.Dir(self), name)
		if info, err := os.Stat(candidate); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
			return candidate, nil
		}
	}
	if path, err := exec.LookPath(name); err == nil {
		return path, nil
	}
	return "", fmt.Errorf("cannot find %s next to this flotilla executable or on PATH\nBuild it (make build puts every binary in bin/) or add its directory to PATH", name)
}
