package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

var secret = []byte("a secret of enough length for HS256!")

// testKeys are one RSA and one P-256 key, written to a JWKS file and read
// back through LoadJWKS, as the server's -jwt-jwks flag does.
type testKeys struct {
	rsa  *rsa.PrivateKey
	ec   *ecdsa.PrivateKey
	jwks string
}

func newTestKeys(t *testing.T) testKeys {
	t.Helper()
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	pt, err := ek.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]any{"keys": []map[string]string{
		{"kty": "RSA", "kid": "r1", "use": "sig", "n": b64(rk.N.Bytes()), "e": b64(big.NewInt(int64(rk.E)).Bytes())},
		{"kty": "EC", "kid": "e1", "crv": "P-256", "x": b64(pt[1:33]), "y": b64(pt[33:])},
		{"kty": "oct", "kid": "ignored", "k": "c2VjcmV0"},
	}}
	raw, _ := json.Marshal(set)
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return testKeys{rsa: rk, ec: ek, jwks: path}
}

func sign(t *testing.T, m jwt.SigningMethod, kid string, key any, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(m, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func claims(sub string, exp time.Duration) jwt.MapClaims {
	c := jwt.MapClaims{"exp": time.Now().Add(exp).Unix()}
	if sub != "" {
		c["sub"] = sub
	}
	return c
}

func TestJWT(t *testing.T) {
	k := newTestKeys(t)
	keys, err := LoadJWKS(k.jwks)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 {
		t.Fatalf("LoadJWKS: %d keys, want the RSA and the EC one", len(keys))
	}
	withSecret, err := JWT(JWTConfig{Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	withKeys, err := JWT(JWTConfig{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	withBoth, err := JWT(JWTConfig{Secret: secret, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	rsaPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: must(x509.MarshalPKIXPublicKey(&k.rsa.PublicKey))})
	unsigned := must(jwt.NewWithClaims(jwt.SigningMethodNone, claims("alice", time.Hour)).SignedString(jwt.UnsafeAllowNoneSignatureType))

	cases := []struct {
		name  string
		auth  Authorizer
		token string
		want  string // principal; "" = refused
	}{
		{"HS256", withSecret, sign(t, jwt.SigningMethodHS256, "", secret, claims("alice", time.Hour)), "alice"},
		{"RS256", withKeys, sign(t, jwt.SigningMethodRS256, "r1", k.rsa, claims("bob", time.Hour)), "bob"},
		{"ES256", withKeys, sign(t, jwt.SigningMethodES256, "e1", k.ec, claims("carol", time.Hour)), "carol"},
		{"HS256 beside keys", withBoth, sign(t, jwt.SigningMethodHS256, "", secret, claims("dan", time.Hour)), "dan"},
		{"expired", withSecret, sign(t, jwt.SigningMethodHS256, "", secret, claims("alice", -time.Hour)), ""},
		{"no exp", withSecret, sign(t, jwt.SigningMethodHS256, "", secret, jwt.MapClaims{"sub": "alice"}), ""},
		{"no sub", withSecret, sign(t, jwt.SigningMethodHS256, "", secret, claims("", time.Hour)), ""},
		{"wrong secret", withSecret, sign(t, jwt.SigningMethodHS256, "", []byte("another secret, as long as the first"), claims("alice", time.Hour)), ""},
		{"alg none", withBoth, unsigned, ""},
		{"HS256 signed with the RSA public key", withKeys, sign(t, jwt.SigningMethodHS256, "r1", rsaPEM, claims("mallory", time.Hour)), ""},
		{"HS256 signed with the RSA public key, secret set", withBoth, sign(t, jwt.SigningMethodHS256, "r1", rsaPEM, claims("mallory", time.Hour)), ""},
		{"RS256 without keys", withSecret, sign(t, jwt.SigningMethodRS256, "r1", k.rsa, claims("bob", time.Hour)), ""},
		{"ES256 under the RSA kid", withKeys, sign(t, jwt.SigningMethodES256, "r1", k.ec, claims("carol", time.Hour)), ""},
		{"unknown kid", withKeys, sign(t, jwt.SigningMethodRS256, "r2", k.rsa, claims("bob", time.Hour)), ""},
		{"RS256 by another key", withKeys, sign(t, jwt.SigningMethodRS256, "r1", must(rsa.GenerateKey(rand.Reader, 2048)), claims("bob", time.Hour)), ""},
		{"empty", withBoth, "", ""},
		{"garbage", withBoth, "not.a.jwt", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.auth.Authorize(httptest.NewRequest("GET", "/v1/sessions", nil), c.token)
			if c.want == "" {
				if err == nil || !errors.Is(err, ErrUnauthorized) {
					t.Fatalf("accepted as %q (err %v), want ErrUnauthorized", got, err)
				}
				if c.token != "" && len(c.token) > 10 && contains(err.Error(), c.token) {
					t.Fatalf("the error quotes the token: %v", err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("principal %q, err %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestSharedToken(t *testing.T) {
	a := SharedToken("s3cret")
	r := httptest.NewRequest("GET", "/", nil)
	if p, err := a.Authorize(r, "s3cret"); err != nil || p != Shared {
		t.Fatalf("right token: %q, %v", p, err)
	}
	for _, bad := range []string{"", "s3cre", "s3cret!"} {
		if _, err := a.Authorize(r, bad); !errors.Is(err, ErrUnauthorized) {
			t.Errorf("token %q: err %v, want ErrUnauthorized", bad, err)
		}
	}
}

func TestJWKSRejectsBadKeys(t *testing.T) {
	for name, raw := range map[string]string{
		"not json":     `{`,
		"no keys":      `{"keys": []}`,
		"only oct":     `{"keys": [{"kty": "oct", "k": "eA"}]}`,
		"short rsa":    `{"keys": [{"kty": "RSA", "n": "AQAB", "e": "AQAB"}]}`,
		"ec off curve": `{"keys": [{"kty": "EC", "crv": "P-256", "x": "` + base64.RawURLEncoding.EncodeToString(make([]byte, 32)) + `", "y": "` + base64.RawURLEncoding.EncodeToString(make([]byte, 32)) + `"}]}`,
		"ec P-384":     `{"keys": [{"kty": "EC", "crv": "P-384", "x": "AA", "y": "AA"}]}`,
	} {
		if _, err := ParseJWKS([]byte(raw)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
