package auth

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// JWTConfig configures JWT. At least one of Secret and Keys is required.
type JWTConfig struct {
	// Secret verifies HS256 tokens.
	Secret []byte
	// Keys verify RS256 (RSA keys) and ES256 (P-256 keys) tokens, by the
	// token's "kid" header; a token without kid may use the only key of a
	// one-key set. LoadJWKS reads them from a JWKS file.
	Keys map[string]any
	// Leeway tolerates clock skew on exp/nbf/iat (default 30 s).
	Leeway time.Duration
}

// JWT admits requests whose bearer token is a signed JWT with an "exp" in
// the future and a non-empty "sub", the principal. Only the algorithms of
// the configured keys are accepted: "none" never is, and an HS256 token is
// never checked against an RSA or EC public key (the confusion attack).
func JWT(cfg JWTConfig) (Authorizer, error) {
	var methods []string
	if len(cfg.Secret) > 0 {
		methods = append(methods, jwt.SigningMethodHS256.Alg())
	}
	for kid, k := range cfg.Keys {
		switch k := k.(type) {
		case *rsa.PublicKey:
		case *ecdsa.PublicKey:
			if k.Curve.Params().Name != "P-256" {
				return nil, fmt.Errorf("auth: key %q: curve %s is not P-256", kid, k.Curve.Params().Name)
			}
		default:
			return nil, fmt.Errorf("auth: key %q: type %T is neither RSA nor ECDSA", kid, k)
		}
	}
	if len(cfg.Keys) > 0 {
		methods = append(methods, jwt.SigningMethodRS256.Alg(), jwt.SigningMethodES256.Alg())
	}
	if len(methods) == 0 {
		return nil, errors.New("auth: JWT needs a secret or keys")
	}
	leeway := cfg.Leeway
	if leeway <= 0 {
		leeway = 30 * time.Second
	}
	parser := jwt.NewParser(jwt.WithValidMethods(methods), jwt.WithExpirationRequired(), jwt.WithLeeway(leeway))
	keyFor := func(t *jwt.Token) (any, error) {
		switch t.Method.(type) {
		case *jwt.SigningMethodHMAC:
			return cfg.Secret, nil
		case *jwt.SigningMethodRSA:
			return lookupKey[*rsa.PublicKey](cfg.Keys, t)
		case *jwt.SigningMethodECDSA:
			return lookupKey[*ecdsa.PublicKey](cfg.Keys, t)
		}
		return nil, fmt.Errorf("algorithm %s is not accepted", t.Method.Alg())
	}
	return Func(func(_ *http.Request, token string) (string, error) {
		if token == "" {
			return "", errors.Join(ErrUnauthorized, errors.New("missing bearer token"))
		}
		var claims jwt.RegisteredClaims
		if _, err := parser.ParseWithClaims(token, &claims, keyFor); err != nil {
			return "", errors.Join(ErrUnauthorized, fmt.Errorf("invalid token: %w", err))
		}
		if claims.Subject == "" {
			return "", errors.Join(ErrUnauthorized, errors.New("token has no sub claim"))
		}
		return claims.Subject, nil
	}), nil
}

// lookupKey finds the token's key by kid, of the type its algorithm needs.
func lookupKey[K any](keys map[string]any, t *jwt.Token) (any, error) {
	kid, _ := t.Header["kid"].(string)
	k, ok := keys[kid]
	if !ok && kid == "" && len(keys) == 1 {
		for _, only := range keys {
			k, ok = only, true
		}
	}
	if !ok {
		return nil, fmt.Errorf("no key with kid %q", kid)
	}
	typed, ok := k.(K)
	if !ok {
		return nil, fmt.Errorf("key %q does not fit algorithm %s", kid, t.Method.Alg())
	}
	return typed, nil
}
