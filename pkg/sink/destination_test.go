package sink

import (
	"context"
	"errors"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/aibom-dev/aibom/api/v1alpha1"
	"github.com/aibom-dev/aibom/internal/dtracktest"
)

func TestDestinationsRefuseLoopbackLinkLocalAndTheAPIServer(t *testing.T) {
	apiServer := netip.MustParseAddr("10.96.0.1")
	d := &Destinations{APIServer: []netip.Addr{apiServer, netip.MustParseAddr("172.18.0.2")}}
	for addr, why := range map[string]string{
		"127.0.0.1":            "loopback",
		"127.1.2.3":            "loopback",
		"::1":                  "loopback",
		"::ffff:127.0.0.1":     "loopback",
		"169.254.169.254":      "link-local", // cloud metadata
		"fe80::1":              "link-local",
		"0.0.0.0":              "unspecified address",
		"::":                   "unspecified address",
		"239.1.2.3":            "multicast",
		"10.96.0.1":            "the cluster's API server",
		"::ffff:172.18.0.2":    "the cluster's API server",
		"10.0.0.7":             "",
		"192.168.1.10":         "",
		"203.0.113.5":          "",
		"2001:db8::5":          "",
		"fd00:ec2::254":        "", // unique local: an ordinary in-cluster address
		"100.100.100.200":      "",
		"::ffff:203.0.113.200": "",
	} {
		err := d.Check(netip.MustParseAddr(addr))
		if why == "" {
			require.NoError(t, err, addr)
			continue
		}
		var de *DestinationError
		require.True(t, errors.As(err, &de), addr)
		require.Equal(t, why, de.Why, addr)
	}
	// Allowed prefixes open exactly what they cover.
	open := &Destinations{APIServer: d.APIServer, Allowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.96.0.1/32")}}
	require.NoError(t, open.Check(netip.MustParseAddr("127.0.0.1")))
	require.NoError(t, open.Check(netip.MustParseAddr("::ffff:127.0.0.1")))
	require.NoError(t, open.Check(apiServer))
	require.Error(t, open.Check(netip.MustParseAddr("127.0.0.2")))
	require.Error(t, open.Check(netip.MustParseAddr("169.254.169.254")))
	// No policy at all refuses every default-refused range.
	require.Error(t, (*Destinations)(nil).Check(netip.MustParseAddr("127.0.0.1")))
}

func TestDestinationsAreCheckedOnTheResolvedAddress(t *testing.T) {
	// "localhost" is no address in the URL, but resolves to loopback: the
	// check at dial time refuses it all the same.
	fake := dtracktest.NewServer("k")
	srv := httptest.NewServer(fake)
	defer srv.Close()
	url := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	e := Event{Op: OpWrite, AIBOM: types.NamespacedName{Namespace: "a", Name: "x"}, Subject: Subject{Kind: "Job", Name: "x"}, Document: []byte(`{}`)}
	c, err := NewHTTPClient(ClientOptions{})
	require.NoError(t, err)
	_, err = (&DependencyTrack{SinkName: "dt", BaseURL: url, Client: c, APIKey: "k"}).Deliver(context.Background(), e)
	require.True(t, IsPermanent(err), "%v", err)
	require.Equal(t, v1alpha1.ReasonDestinationRefused, reasonOf(err))
	require.Empty(t, fake.BOMs, "nothing reached the server")

	// Opted in explicitly, the same sink delivers.
	c, err = NewHTTPClient(ClientOptions{Destinations: loopback})
	require.NoError(t, err)
	_, err = (&DependencyTrack{SinkName: "dt", BaseURL: url, Client: c, APIKey: "k"}).Deliver(context.Background(), e)
	require.NoError(t, err)
	require.Len(t, fake.BOMs, 1)
}
