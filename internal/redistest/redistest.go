// Package redistest starts private redis-server processes for tests.
//
// Every test of code that talks to Redis runs against a real redis-server.
// A test that needs isolation (its own keyspace, FLUSHALL, CONFIG SET) or
// faults (a crash, a restart, a stalled server) starts its own server with
// [Start] and gets it stopped and cleaned up by t.Cleanup:
//
//	func TestSomething(t *testing.T) {
//		t.Parallel()
//		srv := redistest.Start(t, redistest.WithAOF())
//		rdb := srv.Client(t)
//		// ... use rdb; srv.Kill(); srv.Restart(t); srv.Pause(); srv.Resume() ...
//	}
//
// Rules the helper enforces or makes easy:
//
//   - redis-server must be installed. When it is not on PATH the test fails
//     (it is never skipped) with the hints `apt-get install -y redis-server`
//     and `brew install redis`.
//   - Servers listen on loopback only (127.0.0.1 on a free port chosen by the
//     helper, or a unix socket with [WithUnixSocket]); their data and log live
//     in t.TempDir.
//   - Servers never persist RDB snapshots (--save ""); [WithAOF] turns on an
//     append-only file with appendfsync always, which survives [Server.Kill]
//     and [Server.Restart].
//   - A test never flushes a Redis it did not start: flush only servers you
//     got from this package.
//   - The process is killed and reaped at cleanup, and on Linux it is killed
//     by the kernel (PR_SET_PDEATHSIG) when the test binary dies.
//
// Start waits until the server answers PING (at most 10 s) and fails the test
// with the tail of the server's log when it does not. The log of every server
// is printed at cleanup when the test has failed.
//
// [StartCluster] builds a Redis Cluster of private servers with
// `redis-cli --cluster create`. [StartSentinel] starts a master, a replica
// and three sentinels; [NewTLS] and [WithTLS] add a rediss:// listener whose
// certificate a CA made in the test signed.
//
// A program that is not a test (the benchmark cmd/crontabbench) starts a
// server with [Launch] and stops it with [Server.Close].
package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	// installHint is how to get redis-server on the machines this project
	// (and a user's tests, through crontabtest) use.
	installHint = "`apt-get install -y redis-server` (Debian, Ubuntu) or `brew install redis` (macOS)"
	// startTimeout bounds the wait for a started server to answer PING.
	startTimeout = 10 * time.Second
	// stopTimeout bounds the wait for a graceful stop before SIGKILL, and
	// the wait for the process to be reaped after SIGKILL.
	stopTimeout = 10 * time.Second
	// bindAttempts is how often Start tries fresh ports when redis-server
	// cannot bind the port the helper chose (another process took it).
	bindAttempts = 5
	// logTailLines is how much of the server log failure messages show.
	logTailLines = 30
	// maxSocketPath keeps unix socket paths under the 104-byte (macOS) and
	// 108-byte (Linux) sun_path limits.
	maxSocketPath = 100
)

// Option configures a server started by [Start] (or every node of a
// [StartCluster]).
type Option func(*config)

// config is what the options set. The zero value is a plain server on a free
// loopback port, without persistence or authentication.
type config struct {
	aof      bool
	password string
	aclUser  string
	aclPass  string
	unix     bool
	port     int
	args     []string

	// clusterBus makes the helper choose a second free port for the cluster
	// bus and pass it as --cluster-port.
	clusterBus bool

	// sentinelConf, when set, starts the server in sentinel mode with this
	// config file (which redis-server requires as its first argument).
	sentinelConf string
}

// WithAOF turns on the append-only file (appendonly yes, appendfsync always)
// in the server's data directory under t.TempDir, so every acknowledged write
// survives [Server.Kill] and [Server.Restart]. Default: no persistence at all.
func WithAOF() Option {
	return func(c *config) { c.aof = true }
}

// WithPassword protects the default user with pw (requirepass).
// Unauthenticated commands fail with NOAUTH. [Server.Client], [Server.Options]
// and [Server.URL] carry the password. Default (or ""): no password.
func WithPassword(pw string) Option {
	return func(c *config) { c.password = pw }
}

// WithACLUser creates the ACL user user with password pw and full access to
// all keys, channels and commands. The default user is disabled unless
// [WithPassword] also protects it. [Server.Client], [Server.Options] and
// [Server.URL] authenticate as user. Default (or user ""): no ACL user.
func WithACLUser(user, pw string) Option {
	return func(c *config) { c.aclUser, c.aclPass = user, pw }
}

// WithUnixSocket makes the server listen on a unix socket in a short private
// temporary directory instead of TCP (port 0). [Server.Network] is then
// "unix" and [Server.Addr] the socket path. It cannot be combined with
// [WithPort].
func WithUnixSocket() Option {
	return func(c *config) { c.unix = true }
}

// WithArgs appends extra redis-server arguments, e.g. WithArgs("--hz", "100").
// They come after the helper's own arguments, so they override them where
// Redis lets a later setting win. Several WithArgs accumulate.
func WithArgs(args ...string) Option {
	return func(c *config) { c.args = append(c.args, args...) }
}

// WithPort makes the server listen on 127.0.0.1:port. Default (or 0): a free
// loopback port chosen by the helper, retried when another process takes it
// first. A fixed port that is in use fails the test.
func WithPort(port int) Option {
	return func(c *config) { c.port = port }
}

// Server is a private redis-server process started by [Start]. Its methods
// are safe for concurrent use.
type Server struct {
	binary  string
	cfg     config
	dir     string // data directory (t.TempDir, or a temporary directory of Launch)
	ownDir  bool   // Close removes dir (Launch)
	logPath string
	sockDir string // directory of the unix socket, removed at cleanup
	sock    string // unix socket path

	mu      sync.Mutex
	port    int
	busPort int
	proc    *process // the current or last process; nil before the first launch
}

// process is one run of redis-server. done is closed once Wait has returned,
// so the process is always reaped.
type process struct {
	pid  int
	done chan struct{}
	err  error // Wait's error, valid after done is closed
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// errBind marks a start that failed because the port was taken.
var errBind = errors.New("address already in use")

// Start starts a private redis-server for the test and stops it at
// t.Cleanup. It returns once the server answers PING. It fails the test
// (t.Fatalf) with a clear message when redis-server is not on PATH — with the
// install hint `apt-get install -y redis-server` — or when the server does not
// come up within 10 s, showing the tail of its log. It never skips.
//
// The server runs with --save "", --bind 127.0.0.1, --daemonize no, its data
// directory and log file in t.TempDir, and --protected-mode no unless a
// password or ACL user is set.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	var cfg config
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	return start(t, cfg)
}

// start is Start after the options are applied; other constructors in this
// package (StartCluster) use it with internal settings.
func start(t testing.TB, cfg config) *Server {
	t.Helper()
	// t.TempDir registers its removal first, so it runs after our cleanup
	// (cleanups run last-in first-out) and the process is dead by then.
	s, err := launchServer(cfg, t.TempDir())
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() && s.started() {
			t.Logf("redistest: redis-server %s (pid %d) log %s, last lines:\n%s",
				s.Addr(), s.PID(), s.logPath, s.LogTail(logTailLines))
		}
		s.Kill()
		s.removeSocketDir()
	})
	return s
}

// Launch starts a private redis-server for a program that is not a test
// (a benchmark, a demo), with the same settings and checks as [Start]; its
// data directory is a new temporary directory. It returns once the server
// answers PING. The caller must call [Server.Close], which kills the server
// and removes its files.
func Launch(opts ...Option) (*Server, error) {
	var cfg config
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	dir, err := os.MkdirTemp("", "redistest")
	if err != nil {
		return nil, fmt.Errorf("redistest: data directory: %w", err)
	}
	s, err := launchServer(cfg, dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("redistest: %w", err)
	}
	s.ownDir = true
	return s, nil
}

// Close kills a server started by [Launch] and removes its data directory
// and socket directory. Servers of [Start] are closed at t's cleanup; Close
// on one only kills it.
func (s *Server) Close() {
	s.Kill()
	s.removeSocketDir()
	if s.ownDir {
		_ = os.RemoveAll(s.dir)
	}
}

func (s *Server) removeSocketDir() {
	if s.sockDir != "" {
		_ = os.RemoveAll(s.sockDir)
	}
}

// launchServer starts a server with its data in dir, retrying fresh ports
// when another process takes the chosen one. On failure nothing is left
// running and the error carries the tail of the server's log.
func launchServer(cfg config, dir string) (*Server, error) {
	bin, err := lookServer()
	if err != nil {
		return nil, err
	}
	if cfg.unix && cfg.port != 0 {
		return nil, fmt.Errorf("WithUnixSocket and WithPort(%d) cannot be combined", cfg.port)
	}
	if cfg.port < 0 || cfg.port > 65535 {
		return nil, fmt.Errorf("WithPort(%d): not a TCP port", cfg.port)
	}
	cfg.args = append([]string(nil), cfg.args...) // never share the caller's slice

	s := &Server{binary: bin, cfg: cfg, dir: dir}
	s.logPath = filepath.Join(s.dir, "redis.log")
	if cfg.unix {
		dir, err := socketDir()
		if err != nil {
			return nil, fmt.Errorf("unix socket directory: %v", err)
		}
		s.sockDir = dir
		s.sock = filepath.Join(dir, "redis.sock")
	}
	for attempt := 1; ; attempt++ {
		if err := s.choosePorts(); err != nil {
			s.removeSocketDir()
			return nil, err
		}
		_ = os.Remove(s.logPath) // a retry starts a fresh log
		err := s.launch()
		if err == nil {
			return s, nil
		}
		chosen := !cfg.unix && cfg.port == 0 || cfg.clusterBus
		if errors.Is(err, errBind) && chosen && attempt < bindAttempts {
			continue
		}
		s.removeSocketDir()
		return nil, fmt.Errorf("start redis-server: %v\nlog %s, last lines:\n%s", err, s.logPath, s.LogTail(logTailLines))
	}
}

// lookServer finds redis-server on PATH.
func lookServer() (string, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return "", fmt.Errorf("redis-server is not on PATH (%v); tests that talk to Redis run against a real server: install it with %s", err, installHint)
	}
	return bin, nil
}

// socketDir makes a private directory whose socket path is short enough for
// sun_path, preferring $TMPDIR and falling back to /tmp.
func socketDir() (string, error) {
	dir, err := os.MkdirTemp("", "rt")
	if err == nil && len(filepath.Join(dir, "redis.sock")) <= maxSocketPath {
		return dir, nil
	}
	if err == nil {
		_ = os.RemoveAll(dir)
	}
	return os.MkdirTemp("/tmp", "rt")
}

// usedPorts holds every port this test binary has handed out, so two servers
// started at the same time never get the same one.
var usedPorts = struct {
	sync.Mutex
	m map[int]bool
}{m: map[int]bool{}}

// freePort returns a loopback port that was free a moment ago (by listening
// on 127.0.0.1:0 and closing) and that this binary has not handed out yet.
func freePort() (int, error) {
	var lastErr error
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			lastErr = err
			continue
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		usedPorts.Lock()
		taken := usedPorts.m[port]
		usedPorts.m[port] = true
		usedPorts.Unlock()
		if !taken {
			return port, nil
		}
	}
	if lastErr == nil {
		lastErr = errors.New("every port offered was already handed out")
	}
	return 0, fmt.Errorf("no free loopback port: %w", lastErr)
}

// choosePorts sets the ports of the next first launch.
func (s *Server) choosePorts() error {
	port := s.cfg.port
	if !s.cfg.unix && port == 0 {
		p, err := freePort()
		if err != nil {
			return err
		}
		port = p
	}
	bus := 0
	if s.cfg.clusterBus {
		p, err := freePort()
		if err != nil {
			return err
		}
		bus = p
	}
	s.mu.Lock()
	s.port, s.busPort = port, bus
	s.mu.Unlock()
	return nil
}

// serverArgs is the redis-server command line for the current ports.
func (s *Server) serverArgs() []string {
	s.mu.Lock()
	port, bus := s.port, s.busPort
	s.mu.Unlock()
	a := []string{
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--daemonize", "no",
		"--save", "",
		"--dir", s.dir,
		"--logfile", s.logPath,
		// Replicas (REPLICAOF, cluster replicas) sync at once instead of
		// after the default 5 s wait for more replicas.
		"--repl-diskless-sync-delay", "0",
	}
	if s.cfg.unix {
		a = append(a, "--unixsocket", s.sock, "--unixsocketperm", "700")
	}
	if s.cfg.aof {
		a = append(a, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		a = append(a, "--appendonly", "no")
	}
	if s.cfg.password == "" && s.cfg.aclUser == "" {
		a = append(a, "--protected-mode", "no")
	}
	if s.cfg.password != "" {
		a = append(a, "--requirepass", s.cfg.password)
	}
	if s.cfg.aclUser != "" {
		a = append(a, "--user", s.cfg.aclUser, "on", ">"+s.cfg.aclPass, "~*", "&*", "+@all")
		if s.cfg.password == "" {
			a = append(a, "--user", "default", "off")
		}
	}
	if bus != 0 {
		a = append(a, "--cluster-port", strconv.Itoa(bus))
	}
	if s.cfg.sentinelConf != "" {
		a = append([]string{s.cfg.sentinelConf, "--sentinel"}, a...)
	}
	return append(a, s.cfg.args...)
}

// launch starts redis-server and waits until it answers PING. On failure the
// process is killed and reaped.
func (s *Server) launch() error {
	logf, err := os.OpenFile(s.logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	// Errors redis-server prints before it opens its log (a bad argument)
	// go to stdout/stderr: append them to the same file.
	cmd := newCommand(s.binary, s.serverArgs()...)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = logf, logf
	err = startCommand(cmd)
	_ = logf.Close()
	if err != nil {
		return fmt.Errorf("exec %s: %w", s.binary, err)
	}
	p := &process{pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()

	if err := s.waitReady(p); err != nil {
		killProcess(p)
		return err
	}
	return nil
}

// waitReady polls until the process p answers PING on the server's address,
// exits, or startTimeout passes.
func (s *Server) waitReady(p *process) error {
	deadline := time.Now().Add(startTimeout)
	delay := 5 * time.Millisecond
	var lastErr error
	for {
		if p.exited() {
			if s.logContains("Address already in use") {
				return fmt.Errorf("redis-server on %s exited: %w", s.Addr(), errBind)
			}
			return fmt.Errorf("redis-server on %s exited before it answered PING: %v", s.Addr(), p.err)
		}
		var pid int
		var err error
		probed := make(chan struct{})
		go func() {
			defer close(probed)
			pid, err = s.probe()
		}()
		select {
		case <-probed:
		case <-p.done:
			continue // report the exit at the top of the loop
		}
		switch {
		case err != nil:
			lastErr = err
		case pid != p.pid:
			// Another server answers on our address: ours will fail to
			// bind and exit; wait for that.
			lastErr = fmt.Errorf("%s is served by another process (pid %d, ours is %d)", s.Addr(), pid, p.pid)
		default:
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server (pid %d) on %s did not answer PING within %v: %v", p.pid, s.Addr(), startTimeout, lastErr)
		}
		time.Sleep(delay)
		delay = min(2*delay, 50*time.Millisecond)
	}
}

// probe authenticates if needed, sends PING (which fails while the server
// still loads its data) and INFO server, and returns the server's pid.
func (s *Server) probe() (int, error) {
	conn, err := net.DialTimeout(s.Network(), s.Addr(), time.Second)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))

	var cmds [][]string
	switch user, pw := s.credentials(); {
	case user != "":
		cmds = append(cmds, []string{"AUTH", user, pw})
	case pw != "":
		cmds = append(cmds, []string{"AUTH", pw})
	}
	cmds = append(cmds, []string{"PING"}, []string{"INFO", "server"})
	var req strings.Builder
	for _, c := range cmds {
		fmt.Fprintf(&req, "*%d\r\n", len(c))
		for _, a := range c {
			fmt.Fprintf(&req, "$%d\r\n%s\r\n", len(a), a)
		}
	}
	if _, err := io.WriteString(conn, req.String()); err != nil {
		return 0, err
	}
	r := bufio.NewReader(conn)
	var info string
	for i, c := range cmds {
		reply, err := readReply(r)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", c[0], err)
		}
		if i == len(cmds)-1 {
			info = reply
		}
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(line, "process_id:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, errors.New("INFO server has no process_id")
}

// readReply reads one RESP2 reply of the kinds PING, AUTH and INFO return.
func readReply(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("empty reply")
	}
	switch line[0] {
	case '+', ':':
		return line[1:], nil
	case '-':
		return "", errors.New(line[1:])
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return "", fmt.Errorf("bad bulk reply %q", line)
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	default:
		return "", fmt.Errorf("unexpected reply %q", line)
	}
}

func (s *Server) logContains(sub string) bool {
	b, err := os.ReadFile(s.logPath)
	return err == nil && strings.Contains(string(b), sub)
}

func (s *Server) current() *process {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc
}

func (s *Server) started() bool { return s.current() != nil }

// credentials are the user name and password clients authenticate with.
func (s *Server) credentials() (user, pw string) {
	if s.cfg.aclUser != "" {
		return s.cfg.aclUser, s.cfg.aclPass
	}
	return "", s.cfg.password
}

// Addr returns the address clients connect to: "127.0.0.1:PORT", or the
// socket path with [WithUnixSocket]. It stays the same across restarts.
func (s *Server) Addr() string {
	if s.cfg.unix {
		return s.sock
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
}

// Network returns "unix" with [WithUnixSocket], else "tcp".
func (s *Server) Network() string {
	if s.cfg.unix {
		return "unix"
	}
	return "tcp"
}

// URL returns a redis:// URL (or unix:// with [WithUnixSocket]) that
// redis.ParseURL accepts, with the credentials of [WithACLUser] or
// [WithPassword] when set.
func (s *Server) URL() string {
	u := url.URL{Scheme: "redis", Host: s.Addr()}
	if s.cfg.unix {
		u = url.URL{Scheme: "unix", Path: s.sock}
	}
	if user, pw := s.credentials(); user != "" || pw != "" {
		u.User = url.UserPassword(user, pw)
	}
	return u.String()
}

// Options returns new go-redis options for the server: network, address and
// credentials; everything else is go-redis's default. Tests that need other
// timeouts or retries change the copy and call redis.NewClient themselves.
func (s *Server) Options() *redis.Options {
	user, pw := s.credentials()
	return &redis.Options{
		Network:  s.Network(),
		Addr:     s.Addr(),
		Username: user,
		Password: pw,
	}
}

// Client returns a new go-redis client for the server (see [Server.Options]),
// closed at t's cleanup. It keeps working across [Server.Restart].
func (s *Server) Client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(s.Options())
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// PID returns the process id of the running server, or of the last one after
// it stopped; 0 if none was started.
func (s *Server) PID() int {
	if p := s.current(); p != nil {
		return p.pid
	}
	return 0
}

// LogPath returns the server's log file, which also holds what redis-server
// printed to stdout and stderr. It survives restarts (they append) and is
// removed with t.TempDir after the test.
func (s *Server) LogPath() string { return s.logPath }

// LogTail returns the last n lines of the server's log, for failure messages.
func (s *Server) LogTail(n int) string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Stop stops the server gracefully (SIGTERM: with AOF it fsyncs; with
// --save "" it writes no snapshot) and waits until the process has exited.
// A paused server is resumed so it can stop. After 10 s it is killed. Stop on
// a stopped server does nothing.
func (s *Server) Stop() {
	p := s.current()
	if p == nil || p.exited() {
		return
	}
	_ = syscall.Kill(p.pid, syscall.SIGTERM)
	_ = syscall.Kill(p.pid, syscall.SIGCONT)
	select {
	case <-p.done:
	case <-time.After(stopTimeout):
		killProcess(p)
	}
}

// Kill kills the server with SIGKILL — a crash: whatever is not in the AOF is
// lost — and waits until the process has exited. Kill on a stopped server
// does nothing.
func (s *Server) Kill() {
	if p := s.current(); p != nil {
		killProcess(p)
	}
}

// killProcess sends SIGKILL to the process group of p (redis-server and any
// child it forked for an AOF rewrite) and waits for p to be reaped.
func killProcess(p *process) {
	if p.exited() {
		return
	}
	_ = syscall.Kill(-p.pid, syscall.SIGKILL)
	_ = syscall.Kill(p.pid, syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(stopTimeout):
	}
}

// Restart starts the server again on the same address, data directory and
// log; a running server is stopped first (see [Server.Stop]). With [WithAOF]
// the data survives, even after [Server.Kill]; without it the new server is
// empty. Existing clients reconnect. It fails t when the server does not come
// back (for example, another process took its port meanwhile).
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	if err := s.Relaunch(); err != nil {
		t.Fatal(err)
	}
}

// Relaunch is [Server.Restart] for a program that is not a test (the chaos
// soak cmd/crontabchaos): it returns the error, with the tail of the
// server's log, instead of failing a test.
func (s *Server) Relaunch() error {
	s.Stop()
	if err := s.launch(); err != nil {
		return fmt.Errorf("redistest: restart redis-server: %v\nlog %s, last lines:\n%s", err, s.logPath, s.LogTail(logTailLines))
	}
	return nil
}

// Pause stops the process with SIGSTOP: the kernel still accepts connections
// but nothing is answered until [Server.Resume]. Cleanup, Stop and Kill work
// on a paused server.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a process paused by [Server.Pause] (SIGCONT).
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	if p := s.current(); p != nil && !p.exited() {
		_ = syscall.Kill(p.pid, sig)
	}
}
