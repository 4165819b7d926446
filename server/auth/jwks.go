package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
)

// jwk holds the fields of RFC 7517 keys this package reads: RSA and P-256
// EC public keys.
type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// LoadJWKS reads a JWKS file ({"keys": [...]}) into JWTConfig.Keys. Keys
// whose "use" is not "sig" (when set) are skipped; an RSA or EC key that
// does not parse is an error rather than a silently missing key.
func LoadJWKS(path string) (map[string]any, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth: read JWKS: %w", err)
	}
	return ParseJWKS(raw)
}

// ParseJWKS is LoadJWKS on the file's contents.
func ParseJWKS(raw []byte) (map[string]any, error) {
	var set struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.Unmarshal(raw, &set); err != nil {
		return nil, fmt.Errorf("auth: parse JWKS: %w", err)
	}
	out := map[string]any{}
	for i, k := range set.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		var key any
		var err error
		switch k.Kty {
		case "RSA":
			key, err = k.rsa()
		case "EC":
			key, err = k.ec()
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("auth: JWKS key %d (kid %q): %w", i, k.Kid, err)
		}
		out[k.Kid] = key
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("auth: JWKS has no RSA or EC signing key")
	}
	return out, nil
}

func (k jwk) rsa() (*rsa.PublicKey, error) {
	n, err := b64Int(k.N)
	if err != nil {
		return nil, fmt.Errorf("n: %w", err)
	}
	e, err := b64Int(k.E)
	if err != nil {
		return nil, fmt.Errorf("e: %w", err)
	}
	if !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 {
		return nil, fmt.Errorf("e is out of range")
	}
	if n.BitLen() < 2048 {
		return nil, fmt.Errorf("modulus of %d bits is under 2048", n.BitLen())
	}
	return &rsa.PublicKey{N: n, E: int(e.Int64())}, nil
}

func (k jwk) ec() (*ecdsa.PublicKey, error) {
	if k.Crv != "P-256" {
		return nil, fmt.Errorf("curve %q is not P-256", k.Crv)
	}
	x, err := base64.RawURLEncoding.DecodeString(k.X)
	if err != nil || len(x) != 32 {
		return nil, fmt.Errorf("x is not 32 base64url bytes")
	}
	y, err := base64.RawURLEncoding.DecodeString(k.Y)
	if err != nil || len(y) != 32 {
		return nil, fmt.Errorf("y is not 32 base64url bytes")
	}
	// ParseUncompressedPublicKey checks the point is on the curve.
	return ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
}

func b64Int(s string) (*big.Int, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) == 0 {
		return nil, fmt.Errorf("not base64url")
	}
	return new(big.Int).SetBytes(b), nil
}
