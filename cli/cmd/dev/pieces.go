package dev

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A dev environment's processes are found by what they are, not only by
// the pids recorded when they started: a piece restarted by hand, or by
// an earlier `dev up` whose state file write was lost, is still the
// environment's. Every process the environment starts names a path inside
// its directory on its command line (a --data-dir, a --kubeconfig), and
// nothing else does.

// pieces are the recorded processes, in the order they start: the hub,
// the clusters, then the agents.
func (s *devState) pieces() []*devProcess {
	var ps []*devProcess
	if s.Hub.Process != nil {
		ps = append(ps, s.Hub.Process)
	}
	for _, c := range s.Clusters {
		if c.Process != nil {
			ps = append(ps, c.Process)
		}
	}
	for _, c := range s.Clusters {
		if c.Agent != nil {
			ps = append(ps, c.Agent)
		}
	}
	return ps
}

// piece finds the recorded process named name: "hub", a cluster's name, or
// "<cluster>-agent".
func (s *devState) piece(name string) *devProcess {
	for _, p := range s.pieces() {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// procProcess is a process as /proc shows it.
type procProcess struct {
	PID  int
	Args []string
}

func (p procProcess) String() string {
	return fmt.Sprintf("pid %d: %s", p.PID, strings.Join(p.Args, " "))
}

// listProcesses reads the command line of every process of this user,
// except this one. Zombies (no command line) are left out.
func listProcesses() ([]procProcess, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	self := os.Getpid()
	var out []procProcess
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(data) == 0 {
			continue
		}
		out = append(out, procProcess{PID: pid, Args: strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")})
	}
	return out, nil
}

// argValues are the arguments of a command line as values: "--data-dir=X"
// counts as X too.
func argValues(args []string) []string {
	var out []string
	for _, a := range args {
		out = append(out, a)
		if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
			out = append(out, v)
		}
	}
	return out
}

// identity is the argument that tells a piece apart from every other
// process: the first path inside dir on its recorded command line (the
// hub's and a cluster's --data-dir, an agent's --kubeconfig).
func (p *devProcess) identity(dir string) string {
	if len(p.Args) < 2 {
		return ""
	}
	for _, a := range argValues(p.Args[1:]) {
		if strings.HasPrefix(a, dir+string(filepath.Separator)) {
			return a
		}
	}
	return ""
}

// isPieceProcess reports whether a running process is the piece p: the
// same program, with the same identity on its command line.
func (p *devProcess) isPieceProcess(dir string, q procProcess) bool {
	id := p.identity(dir)
	if id == "" || len(q.Args) == 0 || filepath.Base(q.Args[0]) != filepath.Base(p.Args[0]) {
		return false
	}
	if filepath.Base(p.Args[0]) == "flotilla" && !isAgentCommand(q.Args) {
		return false
	}
	return slices.Contains(argValues(q.Args[1:]), id)
}

// isAgentCommand reports whether a flotilla command line runs an agent.
func isAgentCommand(args []string) bool {
	return len(args) > 2 && args[1] == "join" && slices.Contains(args, "--run")
}

// isSandboxProcess reports whether a running process belongs to the dev
// environment in dir: one of its programs, naming a path inside dir.
// flotilla commands other than an agent (`flotilla dev down --dir DIR`
// itself) do not.
func isSandboxProcess(dir string, q procProcess) bool {
	switch filepath.Base(q.Args[0]) {
	case hubBinary, devClusterBinary:
	case "flotilla":
		if !isAgentCommand(q.Args) {
			return false
		}
	default:
		return false
	}
	return slices.ContainsFunc(argValues(q.Args[1:]), func(a string) bool {
		return strings.HasPrefix(a, dir+string(filepath.Separator))
	})
}

// sandboxProcesses lists the running processes of the dev environment in
// dir, recorded or not.
func sandboxProcesses(dir string) ([]procProcess, error) {
	all, err := listProcesses()
	if err != nil {
		return nil, err
	}
	var out []procProcess
	for _, q := range all {
		if isSandboxProcess(dir, q) {
			out = append(out, q)
		}
	}
	return out, nil
}

// adopt points each recorded piece that no longer runs at the process that
// now runs as it, if there is one (a piece restarted by hand). It returns
// the names of the pieces adopted.
func (s *devState) adopt(dir string) ([]string, error) {
	var stale []*devProcess
	for _, p := range s.pieces() {
		if !p.alive() {
			stale = append(stale, p)
		}
	}
	if len(stale) == 0 {
		return nil, nil
	}
	running, err := listProcesses()
	if err != nil {
		return nil, err
	}
	var adopted []string
	for _, p := range stale {
		for _, q := range running {
			if p.isPieceProcess(dir, q) {
				p.PID = q.PID
				p.StartTime, _ = procStartTime(q.PID)
				p.exited = nil
				adopted = append(adopted, p.Name)
				break
			}
		}
	}
	return adopted, nil
}

// readyURL reads the address a server printed in its ready line, in the
// part of its log written since it started.
func (p *devProcess) readyURL(readyLine string) (string, error) {
	data, err := p.logSinceStart()
	if err != nil {
		return "", err
	}
	i := bytes.Index(data, []byte(readyLine))
	if i < 0 {
		return "", fmt.Errorf("%s did not print %q", p.Name, readyLine)
	}
	fields := strings.Fields(string(data[i+len(readyLine):]))
	if len(fields) == 0 || !strings.HasPrefix(fields[0], "https://") {
		return "", fmt.Errorf("%s printed no address after %q", p.Name, readyLine)
	}
	return fields[0], nil
}

// setArg replaces the value of flag on the recorded command line, so that
// a restart takes the port the process first chose.
func (p *devProcess) setArg(flag, value string) {
	for i := 0; i+1 < len(p.Args); i++ {
		if p.Args[i] == flag {
			p.Args[i+1] = value
			return
		}
	}
}

// addressInUse reports whether a process that stopped failed on a busy
// port, which another try on another (or the same, once freed) port cures.
func (p *devProcess) addressInUse() bool {
	data, err := p.logSinceStart()
	return err == nil && bytes.Contains(data, []byte("address already in use"))
}

// dataDirBusy reports whether a server that stopped found its data
// directory locked by another process.
func (p *devProcess) dataDirBusy() bool {
	data, err := p.logSinceStart()
	return err == nil && bytes.Contains(data, []byte("is in use by another"))
}
