package membership

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"syscall"
	"time"

	sockaddr "github.com/hashicorp/go-sockaddr"
	"github.com/hashicorp/memberlist"
)

// maxPacket is the largest UDP datagram.
const maxPacket = 65536

// udpRecvBuf is the receive buffer asked of the kernel for the UDP socket,
// as memberlist asks: a join storm of hundreds of members arrives in
// bursts.
const udpRecvBuf = 2 << 20

// transport is memberlist's packet and stream transport, as its own
// NetTransport does it (UDP for packets, a TCP connection per stream, on
// one address and port) but for the buffer each packet is read into.
// NetTransport reads every packet into a fresh 64 KiB buffer, which the
// runtime must clear and the collector reclaim, for packets that on a LAN
// are at most 1,400 bytes. In a join storm of 300 members in one process
// (the load generator, e2e/bench_scale_test.go) allocating and clearing
// them took 12% of the process's CPU, beside 8% spent collecting. Here
// each socket has one 64 KiB buffer that it reads into, and
// each packet is copied out at its own size: memberlist keeps a packet's
// buffer while it handles it, so the read buffer cannot be lent.
type transport struct {
	tcp    *net.TCPListener
	udp    *net.UDPConn
	log    *slog.Logger
	packet chan *memberlist.Packet
	stream chan net.Conn

	closing chan struct{}
	once    sync.Once
	wg      sync.WaitGroup
}

var _ memberlist.NodeAwareTransport = (*transport)(nil)

// listen binds TCP and UDP on host and port, the same port for both. An
// empty host is every interface. With port 0 the kernel picks the TCP
// port and UDP takes the same, tried a few times in case another process
// holds that port's UDP side.
func listen(host string, port int, logger *slog.Logger) (*transport, error) {
	ip := net.ParseIP(host)
	if ip == nil && host != "" {
		return nil, fmt.Errorf("gossip bind address %q is not an IP address: give one, such as 10.0.0.1", host)
	}
	tries := 1
	if port == 0 {
		tries = 10
	}
	for {
		t, err := listenOnce(ip, port, logger)
		if tries--; err == nil || tries == 0 || !errors.Is(err, errUDPInUse) {
			return t, err
		}
	}
}

var errUDPInUse = errors.New("the UDP side of the port the kernel picked is in use")

func listenOnce(ip net.IP, port int, logger *slog.Logger) (*transport, error) {
	tcp, err := net.ListenTCP("tcp", &net.TCPAddr{IP: ip, Port: port})
	if err != nil {
		return nil, fmt.Errorf("listen on TCP %s: %w", net.JoinHostPort(ip.String(), strconv.Itoa(port)), err)
	}
	port = tcp.Addr().(*net.TCPAddr).Port
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: ip, Port: port})
	if err != nil {
		tcp.Close()
		if errors.Is(err, syscall.EADDRINUSE) {
			err = fmt.Errorf("%w: %w", errUDPInUse, err)
		}
		return nil, fmt.Errorf("listen on UDP %s: %w", net.JoinHostPort(ip.String(), strconv.Itoa(port)), err)
	}
	for size := udpRecvBuf; size > 0; size /= 2 {
		if udp.SetReadBuffer(size) == nil {
			break
		}
	}
	t := &transport{
		tcp: tcp, udp: udp, log: logger,
		packet: make(chan *memberlist.Packet), stream: make(chan net.Conn),
		closing: make(chan struct{}),
	}
	t.wg.Add(2)
	go t.acceptLoop()
	go t.readLoop()
	return t, nil
}

// FinalAdvertiseAddr implements memberlist.Transport: the address given,
// or else the one bound; a member bound to every interface advertises
// its first private address, as memberlist's own transport does.
func (t *transport) FinalAdvertiseAddr(ip string, port int) (net.IP, int, error) {
	if ip != "" {
		a := net.ParseIP(ip)
		if a == nil {
			return nil, 0, fmt.Errorf("gossip advertise address %q is not an IP address", ip)
		}
		if a4 := a.To4(); a4 != nil {
			a = a4
		}
		return a, port, nil
	}
	bound := t.tcp.Addr().(*net.TCPAddr)
	if !bound.IP.IsUnspecified() {
		return bound.IP, bound.Port, nil
	}
	priv, err := sockaddr.GetPrivateIP()
	if err != nil {
		return nil, 0, fmt.Errorf("find this host's private IP address to advertise: %w", err)
	}
	a := net.ParseIP(priv)
	if a == nil {
		return nil, 0, errors.New("bound to every interface but found no private IP address to advertise: give the gossip advertise address")
	}
	return a, bound.Port, nil
}

// WriteTo implements memberlist.Transport.
func (t *transport) WriteTo(b []byte, addr string) (time.Time, error) {
	return t.WriteToAddress(b, memberlist.Address{Addr: addr})
}

// WriteToAddress implements memberlist.NodeAwareTransport.
func (t *transport) WriteToAddress(b []byte, a memberlist.Address) (time.Time, error) {
	ap, err := netip.ParseAddrPort(a.Addr)
	if err != nil {
		ua, rerr := net.ResolveUDPAddr("udp", a.Addr)
		if rerr != nil {
			return time.Time{}, fmt.Errorf("gossip address %q: %w", a.Addr, rerr)
		}
		ap = ua.AddrPort()
	}
	_, err = t.udp.WriteToUDPAddrPort(b, ap)
	return time.Now(), err
}

// PacketCh implements memberlist.Transport.
func (t *transport) PacketCh() <-chan *memberlist.Packet { return t.packet }

// DialTimeout implements memberlist.Transport.
func (t *transport) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	return t.DialAddressTimeout(memberlist.Address{Addr: addr}, timeout)
}

// DialAddressTimeout implements memberlist.NodeAwareTransport.
func (t *transport) DialAddressTimeout(a memberlist.Address, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	return d.Dial("tcp", a.Addr)
}

// StreamCh implements memberlist.Transport.
func (t *transport) StreamCh() <-chan net.Conn { return t.stream }

// Shutdown implements memberlist.Transport: it closes both sockets and
// waits for their loops to end.
func (t *transport) Shutdown() error {
	t.once.Do(func() {
		close(t.closing)
		t.tcp.Close()
		t.udp.Close()
	})
	t.wg.Wait()
	return nil
}

func (t *transport) closed() bool {
	select {
	case <-t.closing:
		return true
	default:
		return false
	}
}

// readLoop hands each UDP packet to memberlist, in a buffer of its size.
func (t *transport) readLoop() {
	defer t.wg.Done()
	buf := make([]byte, maxPacket)
	for {
		n, from, err := t.udp.ReadFromUDPAddrPort(buf)
		ts := time.Now()
		if err != nil {
			if t.closed() {
				return
			}
			t.log.Error("read a gossip packet", "error", err)
			continue
		}
		if n == 0 {
			continue // memberlist needs a message type byte
		}
		p := &memberlist.Packet{Buf: append([]byte(nil), buf[:n]...), From: net.UDPAddrFromAddrPort(netip.AddrPortFrom(from.Addr().Unmap(), from.Port())), Timestamp: ts}
		select {
		case t.packet <- p:
		case <-t.closing:
			return
		}
	}
}

// acceptLoop hands each TCP connection to memberlist; after an accept
// error it waits, longer each time in a row, up to a second.
func (t *transport) acceptLoop() {
	defer t.wg.Done()
	var wait time.Duration
	for {
		conn, err := t.tcp.AcceptTCP()
		if err != nil {
			if t.closed() {
				return
			}
			wait = min(max(2*wait, 5*time.Millisecond), time.Second)
			t.log.Error("accept a gossip connection", "error", err, "retry_in", wait)
			select {
			case <-time.After(wait):
			case <-t.closing:
				return
			}
			continue
		}
		wait = 0
		select {
		case t.stream <- conn:
		case <-t.closing:
			conn.Close()
			return
		}
	}
}
