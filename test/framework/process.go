package framework

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is a binary under test, started as a separate process. Its
// combined output is kept for assertions and for failure reports.
type Process struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
	err  error
}

// StartProcess starts bin with args. The process is killed when ctx ends.
func StartProcess(ctx context.Context, bin string, args ...string) (*Process, error) {
	// The process gets a temporary directory of its own, removed when it
	// ends: a process that tests kill cannot clean up its own temp files.
	tmp, err := os.MkdirTemp("", "flotilla-proc-")
	if err != nil {
		return nil, err
	}
	p := &Process{done: make(chan struct{})}
	p.cmd = exec.CommandContext(ctx, bin, args...)
	p.cmd.Cancel = func() error { return p.cmd.Process.Kill() }
	p.cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	p.cmd.Stdout = p
	p.cmd.Stderr = p
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		os.RemoveAll(tmp)
		close(p.done)
	}()
	return p, nil
}

// Write collects the process's output.
func (p *Process) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

// Output returns everything the process printed so far.
func (p *Process) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// Tail returns the last n lines of output, for failure messages.
func (p *Process) Tail(n int) string {
	lines := strings.Split(strings.TrimRight(p.Output(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits up to timeout for the process to end and returns its exit code.
func (p *Process) Wait(timeout time.Duration) (int, error) {
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode(), nil
	case <-time.After(timeout):
		return -1, fmt.Errorf("process %d still running after %s", p.Pid(), timeout)
	}
}

// Stop sends SIGTERM and waits up to timeout for a clean exit, then kills.
func (p *Process) Stop(timeout time.Duration) (int, error) {
	if p.Exited() {
		return p.cmd.ProcessState.ExitCode(), nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	code, err := p.Wait(timeout)
	if err != nil {
		_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
		<-p.done
	}
	return code, err
}

// Kill ends the process (and its process group) with SIGKILL, as a crash
// would, and waits until it is gone.
func (p *Process) Kill() {
	if p.Exited() {
		return
	}
	_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
	<-p.done
}

// RSS returns the process's resident set size in bytes.
func (p *Process) RSS() (int64, error) {
	return RSSOf(p.Pid())
}

// RSSOf reads a process's resident set size from /proc.
func RSSOf(pid int) (int64, error) {
	kb, err := statusKB(pid, "VmRSS")
	return kb["VmRSS"], err
}

// PeakRSSOf reads a process's peak resident set size (VmHWM) from /proc.
func PeakRSSOf(pid int) (int64, error) {
	kb, err := statusKB(pid, "VmHWM")
	return kb["VmHWM"], err
}

// RSSPartsOf reads what a process's resident set is made of from /proc:
// anonymous memory (its heap and stacks) and pages of files it maps (its
// binary, and for the hub etcd's database), which the kernel can reclaim
// under pressure and read again.
func RSSPartsOf(pid int) (anon, file int64, err error) {
	kb, err := statusKB(pid, "RssAnon", "RssFile")
	return kb["RssAnon"], kb["RssFile"], err
}

// statusKB reads the named fields, in bytes, of a process's
// /proc/<pid>/status, where they are given in kB.
func statusKB(pid int, names ...string) (map[string]int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseStatusKB(f, names...)
}

func parseStatusKB(r io.Reader, names ...string) (map[string]int64, error) {
	got := map[string]int64{}
	s := bufio.NewScanner(r)
	for s.Scan() {
		name, value, ok := strings.Cut(s.Text(), ":")
		if !ok || !slices.Contains(names, name) {
			continue
		}
		var kb int64
		if _, err := fmt.Sscanf(strings.TrimSpace(value), "%d kB", &kb); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		got[name] = kb * 1024
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	for _, name := range names {
		if _, ok := got[name]; !ok {
			return nil, fmt.Errorf("no %s line", name)
		}
	}
	return got, nil
}
