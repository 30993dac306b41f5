package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/meshc/meshc/internal/request"
)

// callFlags are the flags that describe a request.
type callFlags struct {
	method, sni, tls, alpn, protocol string
	headers                          []string
	inbound                          bool
}

func (f *callFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.method, "method", "GET", "the HTTP `METHOD`")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "a request header, 'Name: value' (repeatable); 'Host: name' sets the authority")
	fl.StringVar(&f.sni, "sni", "", "the TLS server `NAME` the client offers (default: the host, for --tls tls)")
	fl.StringVar(&f.tls, "tls", "", "what the client starts: plaintext, tls or mtls (an Istio sidecar's mutual TLS); default tls for https URLs, else plaintext")
	fl.StringVar(&f.alpn, "alpn", "", "the application `PROTOCOLS` the client offers in TLS, comma-separated (default: the protocol's)")
	fl.StringVar(&f.protocol, "protocol", "", "what the client speaks: http, http2, grpc or tcp (default http for URLs, tcp for HOST:PORT)")
	fl.BoolVar(&f.inbound, "inbound", false, "send the request into the proxy from outside (virtualInbound) instead of from its application")
	_ = cmd.RegisterFlagCompletionFunc("tls", cobra.FixedCompletions(request.TLSModes, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("protocol", cobra.FixedCompletions(request.Protocols, cobra.ShellCompDirectiveNoFileComp))
}

// call builds the request from the flags.
func (f *callFlags) call(from, target string) (request.Call, error) {
	c := request.Call{From: from, Target: target, Method: f.method, SNI: f.sni, TLS: f.tls, ALPN: f.alpn, Protocol: f.protocol, Inbound: f.inbound}
	for _, h := range f.headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return c, fmt.Errorf("-H %q: want 'Name: value'", h)
		}
		if c.Headers == nil {
			c.Headers = map[string]string{}
		}
		c.Headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return c, nil
}

func newExplainRequestCmd(g *globals) *cobra.Command {
	var cf compileFlags
	var rf callFlags
	var format string
	cmd := &cobra.Command{
		Use:   "request [gateway] FROM TARGET [PATH...]",
		Short: "Follow one request through a proxy's Envoy configuration: listener, filter chain, route, cluster, endpoints",
		Long: `request walks one request through the Envoy configuration meshc builds for
the proxy FROM, as Envoy would: the listener (original destination hand-off
from virtualOutbound, virtualInbound with --inbound, a gateway's bound port),
the filter chain, the HTTP connection manager or TCP proxy, the route
configuration, the virtual host, the first route that matches and its action,
then the cluster and its endpoints. Each step names the Envoy resource as
meshc build writes it and the Istio object, rule and file:line behind it; a
request that matches nothing says where it stopped and why.

FROM is a proxy, [NAMESPACE/]NAME (namespace "default" when left out), or
"gateway [NAMESPACE/]NAME" for a request arriving at the gateway's port from
outside the mesh (a gateway named without the keyword is taken so too). TARGET is a URL (http://reviews:9080/api?x=1,
https://api.example.com/) or HOST:PORT / IP:PORT: a name resolves as the
client's DNS would, in FROM's namespace, to the service's VIP (a headless
service's first endpoint); -H 'Host: name' sets the authority when it is not
TARGET's host. Only FROM's configuration is built.`,
		Example: `  meshc explain request default/productpage-v1 http://reviews:9080/reviews/0 -H 'end-user: jason' examples/bookinfo
  meshc explain request gateway istio-system/istio-ingressgateway http://bookinfo.example.com/productpage examples/bookinfo
  meshc explain request shop/cart 10.96.0.20:5432 -f ./manifests -o json
  meshc explain request reviews-v1 http://reviews:9080/ --inbound --tls mtls examples/bookinfo`,
		Args: cobra.MinimumNArgs(2),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			switch {
			case len(args) == 0 || (len(args) == 1 && args[0] == "gateway"):
				return g.proxyNames(cmd, &cf)
			case len(args) == 1 || (len(args) == 2 && args[0] == "gateway"):
				return nil, cobra.ShellCompDirectiveNoFileComp // TARGET
			}
			return nil, cobra.ShellCompDirectiveDefault // paths
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			from := args[0]
			if from == "gateway" {
				if len(args) < 3 {
					return &exitError{code: exitUsage, err: errors.New("want gateway [NAMESPACE/]NAME TARGET")}
				}
				from, args = "gateway "+args[1], args[1:]
			}
			target, paths := args[1], args[2:]
			if format != "text" && format != "json" {
				return &exitError{code: exitUsage, err: fmt.Errorf("unknown output format %q (want text or json)", format)}
			}
			c, err := rf.call(from, target)
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			cf.s.Compile.NoAnalyzers = true // the walk needs the mesh, not its diagnostics
			run, err := g.compile(cmd, &cf, paths)
			if err != nil {
				return err
			}
			v, r, err := request.Prepare(run, c)
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			cfg, err := run.Config(cmd.Context(), v, request.BuildOptions())
			if err != nil {
				return fmt.Errorf("build %s: %w", v.Proxy.ID(), err)
			}
			rep := request.Explain(run.Mesh, v, cfg, c.From, r)
			if format == "json" {
				return request.WriteJSON(g.stdout, rep)
			}
			return request.WriteText(g.stdout, rep)
		},
	}
	cf.add(cmd, false)
	rf.add(cmd)
	cmd.Flags().StringVarP(&format, "output", "o", "text", "output `format`: text or json")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}
