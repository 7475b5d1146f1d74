package source

import (
	"errors"
	"fmt"

	"github.com/gopacket/gopacket/layers"
)

// Link types rdmashark reads, by their LINKTYPE_ numbers (the IANA pcap
// link-type registry, tcpdump.org/linktypes.html). gopacket's layers has no
// constant for some of them.
const (
	LinkTypeEthernet   = layers.LinkTypeEthernet  // 1
	LinkTypeRaw        = layers.LinkTypeRaw       // 101, raw IPv4 or IPv6
	LinkTypeLinuxSLL   = layers.LinkTypeLinuxSLL  // 113
	LinkTypeERF        = layers.LinkType(197)     // Endace ERF records (DAG cards, ibdump)
	LinkTypeIPv4       = layers.LinkTypeIPv4      // 228
	LinkTypeIPv6       = layers.LinkTypeIPv6      // 229
	LinkTypeIPoIB      = layers.LinkType(242)     // IP over InfiniBand, 44-byte pseudo-header
	LinkTypeInfiniBand = layers.LinkType(247)     // native InfiniBand, LRH first
	LinkTypeLinuxSLL2  = layers.LinkTypeLinuxSLL2 // 276
)

// supported lists the link types rdmashark decodes, in the order messages
// name them.
var supported = [...]layers.LinkType{
	LinkTypeEthernet, LinkTypeLinuxSLL, LinkTypeLinuxSLL2, LinkTypeRaw,
	LinkTypeIPv4, LinkTypeIPv6, LinkTypeInfiniBand, LinkTypeERF, LinkTypeIPoIB,
}

// linkTypeNames are the registry's LINKTYPE_ names without the prefix, for
// the supported types and the ones a user is likely to feed us by mistake.
var linkTypeNames = map[layers.LinkType]string{
	0:   "NULL",
	1:   "ETHERNET",
	3:   "AX25",
	6:   "IEEE802_5",
	7:   "ARCNET_BSD",
	8:   "SLIP",
	9:   "PPP",
	10:  "FDDI",
	50:  "PPP_HDLC",
	51:  "PPP_ETHER",
	100: "ATM_RFC1483",
	101: "RAW",
	104: "C_HDLC",
	105: "IEEE802_11",
	107: "FRELAY",
	108: "LOOP",
	113: "LINUX_SLL",
	114: "LTALK",
	117: "PFLOG",
	119: "IEEE802_11_PRISM",
	122: "IP_OVER_FC",
	123: "SUNATM",
	127: "IEEE802_11_RADIOTAP",
	129: "ARCNET_LINUX",
	138: "APPLE_IP_OVER_IEEE1394",
	139: "MTP2_WITH_PHDR",
	140: "MTP2",
	141: "MTP3",
	142: "SCCP",
	143: "DOCSIS",
	144: "LINUX_IRDA",
	163: "IEEE802_11_AVS",
	177: "LINUX_LAPD",
	187: "BLUETOOTH_HCI_H4",
	189: "USB_LINUX",
	192: "PPI",
	195: "IEEE802_15_4_WITHFCS",
	197: "ERF",
	201: "BLUETOOTH_HCI_H4_WITH_PHDR",
	220: "USB_LINUX_MMAPPED",
	224: "FC_2",
	225: "FC_2_WITH_FRAME_DELIMS",
	226: "IPNET",
	227: "CAN_SOCKETCAN",
	228: "IPV4",
	229: "IPV6",
	230: "IEEE802_15_4_NOFCS",
	231: "DBUS",
	239: "NFLOG",
	240: "NETANALYZER",
	241: "NETANALYZER_TRANSPARENT",
	242: "IPOIB",
	243: "MPEG_2_TS",
	247: "INFINIBAND",
	248: "SCTP",
	249: "USBPCAP",
	251: "BLUETOOTH_LE_LL",
	252: "WIRESHARK_UPPER_PDU",
	253: "NETLINK",
	254: "BLUETOOTH_LINUX_MONITOR",
	256: "BLUETOOTH_LE_LL_WITH_PHDR",
	258: "PKTAP",
	259: "EPON",
	266: "USB_DARWIN",
	274: "ETHERNET_MPACKET",
	276: "LINUX_SLL2",
}

// LinkTypeName returns the registry name of lt without its LINKTYPE_ prefix
// ("ETHERNET", "LINUX_SLL2", "INFINIBAND"), or "unknown" for a number not in
// this package's table.
func LinkTypeName(lt layers.LinkType) string {
	if n, ok := linkTypeNames[lt]; ok {
		return n
	}
	return "unknown"
}

// ErrUnsupportedLinkType is wrapped by every error Supported returns.
var ErrUnsupportedLinkType = errors.New("link type not supported")

// LinkTypeError says a capture's link type is one rdmashark does not decode.
type LinkTypeError struct {
	LinkType layers.LinkType
}

func (e *LinkTypeError) Error() string {
	return fmt.Sprintf("link type %d (%s) is not supported: rdmashark reads Ethernet, Linux SLL/SLL2, raw IP, InfiniBand, ERF and IPoIB captures",
		uint16(e.LinkType), LinkTypeName(e.LinkType))
}

// Is makes errors.Is(err, ErrUnsupportedLinkType) true.
func (e *LinkTypeError) Is(target error) bool { return target == ErrUnsupportedLinkType }

// Supported returns nil if rdmashark decodes captures of link type lt, and a
// *LinkTypeError naming it otherwise.
func Supported(lt layers.LinkType) error {
	for _, s := range supported {
		if lt == s {
			return nil
		}
	}
	return &LinkTypeError{LinkType: lt}
}
