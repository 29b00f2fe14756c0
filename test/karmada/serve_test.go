package karmada

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// repoRoot is the karta repository this module lies in.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(root, "cmd", "karta", "main.go"), "test/karmada must lie two levels below karta's repository")
	return root
}

// buildKarta builds the karta command of the repository into dir.
func buildKarta(t *testing.T, root, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "karta")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/karta")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build ./cmd/karta:\n%s", out)
	return bin
}

// tlsFiles are a serving certificate for 127.0.0.1 signed by a CA made
// for the test.
type tlsFiles struct {
	caPEM    []byte
	certFile string
	keyFile  string
}

// newTLS writes a fresh CA's serving certificate and key for 127.0.0.1
// (and localhost) into dir.
func newTLS(t *testing.T, dir string) tlsFiles {
	t.Helper()
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "karta-test-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "karta-serve"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)

	f := tlsFiles{
		caPEM:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		certFile: filepath.Join(dir, "tls.crt"),
		keyFile:  filepath.Join(dir, "tls.key"),
	}
	require.NoError(t, os.WriteFile(f.certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(f.keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600))
	return f
}

// server is a running `karta serve`.
type server struct {
	addr  string // host:port
	kinds int    // the kinds it said it serves

	mu     sync.Mutex
	stderr bytes.Buffer // everything it printed on standard error
}

func (s *server) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

var servingLine = regexp.MustCompile(`^karta: serving (\d+) kinds on https://(\S+)$`)

// startServe starts `karta serve` over TLS on a free port of 127.0.0.1
// with args added, waits until it listens, and stops it (SIGTERM) when
// the test ends.
func startServe(t *testing.T, bin string, certs tlsFiles, args ...string) *server {
	t.Helper()
	args = append([]string{"serve", "--listen", "127.0.0.1:0", "--tls-cert", certs.certFile, "--tls-key", certs.keyFile}, args...)
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())

	s := &server{}
	ready := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		found := false
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.stderr.WriteString(line + "\n")
			s.mu.Unlock()
			if m := servingLine.FindStringSubmatch(line); m != nil && !found {
				found = true
				s.kinds, _ = strconv.Atoi(m[1])
				s.addr = m[2]
				ready <- nil
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		if !found {
			ready <- fmt.Errorf("karta serve ended before it listened")
		}
	}()
	exited := make(chan error, 1)
	go func() {
		<-done
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("karta serve ended with %v after SIGTERM; it printed:\n%s", err, s.log())
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("karta serve did not stop within 30s of SIGTERM")
		}
	})

	select {
	case err := <-ready:
		require.NoError(t, err, "it printed:\n%s", s.log())
	case <-time.After(2 * time.Minute):
		t.Fatalf("karta serve did not listen within 2 minutes; it printed:\n%s", s.log())
	}
	return s
}
