package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testCA is a certificate authority made for a test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// issue signs a certificate of tmpl, valid for the hour around now, for a
// new key: by parent, or by itself when parent is nil.
func issue(t *testing.T, tmpl *x509.Certificate, parent *testCA) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return cert, key
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	cert, key := issue(t, &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}, nil)
	return &testCA{cert: cert, key: key}
}

// writePEM writes the CA's certificate to file.
func (ca *testCA) writePEM(t *testing.T, file string) {
	t.Helper()
	require.NoError(t, os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw}), 0o600))
}

// client issues a client certificate.
func (ca *testCA) client(t *testing.T, name string) tls.Certificate {
	t.Helper()
	cert, key := issue(t, &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: name},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}, ca)
	return tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: key}
}

// karta serve --client-ca requires a client certificate of that CA: a
// client without one and a client of another CA are refused, one of the
// CA is answered.
func TestServeClientCA(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, serverPool := selfSigned(t, dir)
	ca, other := newTestCA(t, "karmada-clients"), newTestCA(t, "someone-else")
	caFile := filepath.Join(dir, "ca.crt")
	ca.writePEM(t, caFile)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, done, _ := startServe(t, ctx, servingRE, "serve", "--listen", "127.0.0.1:0", "--tls-cert", certFile, "--tls-key", keyFile, "--client-ca", caFile)

	get := func(certs ...tls.Certificate) (string, error) {
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: serverPool, Certificates: certs, MinVersion: tls.VersionTLS12}}}
		defer client.CloseIdleConnections()
		resp, err := client.Get("https://" + addr + "/healthz")
		if err != nil {
			return "", err
		}
		defer func() { _ = resp.Body.Close() }()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	_, err := get()
	assert.Error(t, err, "a client without a certificate is refused")
	_, err = get(other.client(t, "intruder"))
	assert.Error(t, err, "a client of another CA is refused")
	body, err := get(ca.client(t, "karmada"))
	require.NoError(t, err, "a client of the CA is answered")
	assert.Equal(t, "ok", body)

	cancel()
	waitStopped(t, done)
}
