// Package membership runs the gossip pool (hashicorp/memberlist) that
// servers and workers find each other through: its tuning for a LAN of
// compute nodes, starting and joining it, the transport its packets and
// streams travel by (memberlist's own, but for a buffer per packet of the
// packet's size), and the encryption key that keeps strangers out. Only
// the daemons import it.
package membership
