package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/agentsync/agentsync/server/auth"
)

// jwtSecretEnv is read when -jwt-secret is not given, so the secret need
// not appear in the process list.
const jwtSecretEnv = "AGENTSYNC_JWT_SECRET"

// authOptions choose the API's authorizer: none, the shared -token, or
// per-user JWTs.
type authOptions struct {
	token     string
	jwtSecret string
	jwtJWKS   string
}

func (o *authOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.token, "token", "", "bearer token required on every API request, one shared user (empty = none)")
	fs.StringVar(&o.jwtSecret, "jwt-secret", "", "per-user access: HS256 secret of the bearer JWTs, principal = sub (default $"+jwtSecretEnv+")")
	fs.StringVar(&o.jwtJWKS, "jwt-jwks", "", "per-user access: JWKS file of the RS256/ES256 keys of the bearer JWTs, principal = sub")
}

// authorizer builds the chosen authorizer; nil means none (open).
func (o *authOptions) authorizer() (auth.Authorizer, error) {
	secret := o.jwtSecret
	if secret == "" {
		secret = os.Getenv(jwtSecretEnv)
	}
	if secret == "" && o.jwtJWKS == "" {
		if o.token != "" {
			return auth.SharedToken(o.token), nil
		}
		return nil, nil
	}
	if o.token != "" {
		return nil, errors.New("-token and JWT auth (-jwt-secret, -jwt-jwks or $" + jwtSecretEnv + ") exclude each other")
	}
	cfg := auth.JWTConfig{Secret: []byte(secret)}
	if o.jwtJWKS != "" {
		keys, err := auth.LoadJWKS(o.jwtJWKS)
		if err != nil {
			return nil, fmt.Errorf("-jwt-jwks: %w", err)
		}
		cfg.Keys = keys
	}
	return auth.JWT(cfg)
}

// describe says which authorizer runs, for the start-up log line (never
// the secret).
func (o *authOptions) describe() string {
	switch {
	case o.jwtSecret != "" || os.Getenv(jwtSecretEnv) != "" || o.jwtJWKS != "":
		return "jwt"
	case o.token != "":
		return "token"
	}
	return "none"
}
