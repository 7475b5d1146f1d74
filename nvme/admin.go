package nvme

import "encoding/binary"

// CNS is the Controller or Namespace Structure an Identify command asks
// for, CDW10 bits 7:0 (Base 2.0 "CNS Values").
type CNS uint8

// CNS values.
const (
	CNSNamespace             CNS = 0x00 // Identify Namespace data structure for NSID
	CNSController            CNS = 0x01 // Identify Controller data structure
	CNSActiveNamespaceList   CNS = 0x02 // Active Namespace ID list
	CNSNamespaceDescriptors  CNS = 0x03 // Namespace Identification Descriptor list
	CNSNVMSetList            CNS = 0x04 // NVM Set List
	CNSCSNamespace           CNS = 0x05 // I/O Command Set specific Identify Namespace
	CNSCSController          CNS = 0x06 // I/O Command Set specific Identify Controller
	CNSCSActiveNamespaceList CNS = 0x07 // Active Namespace ID list, I/O Command Set
	CNSIndependentNamespace  CNS = 0x08 // I/O Command Set Independent Identify Namespace
	CNSAllocatedNSList       CNS = 0x10 // Allocated Namespace ID list
	CNSAllocatedNamespace    CNS = 0x11 // Identify Namespace for an allocated NSID
	CNSNSControllerList      CNS = 0x12 // Controller list attached to NSID
	CNSControllerList        CNS = 0x13 // Controller list in the NVM subsystem
	CNSPrimaryCtrlCaps       CNS = 0x14 // Primary Controller Capabilities
	CNSSecondaryCtrlList     CNS = 0x15 // Secondary Controller list
	CNSNamespaceGranularity  CNS = 0x16 // Namespace Granularity List
	CNSUUIDList              CNS = 0x17 // UUID List
	CNSDomainList            CNS = 0x18 // Domain List
	CNSEnduranceGroupList    CNS = 0x19 // Endurance Group List
	CNSCSAllocatedNSList     CNS = 0x1a // Allocated Namespace ID list, I/O Command Set
	CNSCSAllocatedNamespace  CNS = 0x1b // I/O Command Set specific Identify Namespace, allocated
	CNSIOCommandSet          CNS = 0x1c // Identify I/O Command Set data structure
)

var cnsNames = map[CNS]string{
	CNSNamespace:             "Identify Namespace",
	CNSController:            "Identify Controller",
	CNSActiveNamespaceList:   "Active Namespace ID list",
	CNSNamespaceDescriptors:  "Namespace Identification Descriptor list",
	CNSNVMSetList:            "NVM Set List",
	CNSCSNamespace:           "I/O Command Set specific Identify Namespace",
	CNSCSController:          "I/O Command Set specific Identify Controller",
	CNSCSActiveNamespaceList: "I/O Command Set specific Active Namespace ID list",
	CNSIndependentNamespace:  "I/O Command Set Independent Identify Namespace",
	CNSAllocatedNSList:       "Allocated Namespace ID list",
	CNSAllocatedNamespace:    "Identify Namespace (allocated NSID)",
	CNSNSControllerList:      "Namespace Attached Controller list",
	CNSControllerList:        "Controller list",
	CNSPrimaryCtrlCaps:       "Primary Controller Capabilities",
	CNSSecondaryCtrlList:     "Secondary Controller list",
	CNSNamespaceGranularity:  "Namespace Granularity List",
	CNSUUIDList:              "UUID List",
	CNSDomainList:            "Domain List",
	CNSEnduranceGroupList:    "Endurance Group List",
	CNSCSAllocatedNSList:     "I/O Command Set specific Allocated Namespace ID list",
	CNSCSAllocatedNamespace:  "I/O Command Set specific Identify Namespace (allocated NSID)",
	CNSIOCommandSet:          "Identify I/O Command Set data structure",
}

// String names the structure.
func (c CNS) String() string {
	if s, ok := cnsNames[c]; ok {
		return s
	}
	return "Reserved CNS 0x" + hex8(uint8(c))
}

// IdentifyCommand is the command specific part of an Identify command
// (Base 2.0 "Identify Command"): CDW10 CNS (7:0), CNTID (31:16); CDW11
// CNSSID (15:0, e.g. the NVM Set or domain ID), CSI (31:24); CDW14 UUID
// index (6:0).
type IdentifyCommand struct {
	CNS       CNS
	CNTID     uint16
	CNSSID    uint16
	CSI       uint8
	UUIDIndex uint8
}

// Identify reads the SQE as an Identify command.
func (c *Command) Identify() IdentifyCommand {
	return IdentifyCommand{
		CNS:       CNS(c.CDW10),
		CNTID:     uint16(c.CDW10 >> 16),
		CNSSID:    uint16(c.CDW11),
		CSI:       uint8(c.CDW11 >> 24),
		UUIDIndex: uint8(c.CDW14 & 0x7f),
	}
}

// LogPageID is LID, the log page a Get Log Page command reads (Base 2.0
// "Log Page Identifiers").
type LogPageID uint8

// Log page identifiers.
const (
	LogSupportedLogPages        LogPageID = 0x00
	LogErrorInformation         LogPageID = 0x01
	LogSMARTHealth              LogPageID = 0x02
	LogFirmwareSlot             LogPageID = 0x03
	LogChangedNamespaceList     LogPageID = 0x04
	LogCommandsSupported        LogPageID = 0x05
	LogDeviceSelfTest           LogPageID = 0x06
	LogTelemetryHost            LogPageID = 0x07
	LogTelemetryController      LogPageID = 0x08
	LogEnduranceGroupInfo       LogPageID = 0x09
	LogPredictableLatencyNVMSet LogPageID = 0x0a
	LogPredictableLatencyAggr   LogPageID = 0x0b
	LogANA                      LogPageID = 0x0c
	LogPersistentEvent          LogPageID = 0x0d
	LogEnduranceGroupEventAggr  LogPageID = 0x0f
	LogMediaUnitStatus          LogPageID = 0x10
	LogSupportedCapacityConfig  LogPageID = 0x11
	LogFeatureIDsSupported      LogPageID = 0x12
	LogNVMeMICommandsSupported  LogPageID = 0x13
	LogCommandFeatureLockdown   LogPageID = 0x14
	LogBootPartition            LogPageID = 0x15
	LogRotationalMedia          LogPageID = 0x16
	LogDiscovery                LogPageID = 0x70
	LogReservationNotification  LogPageID = 0x80
	LogSanitizeStatus           LogPageID = 0x81
)

var logPageNames = map[LogPageID]string{
	LogSupportedLogPages:        "Supported Log Pages",
	LogErrorInformation:         "Error Information",
	LogSMARTHealth:              "SMART / Health Information",
	LogFirmwareSlot:             "Firmware Slot Information",
	LogChangedNamespaceList:     "Changed Namespace List",
	LogCommandsSupported:        "Commands Supported and Effects",
	LogDeviceSelfTest:           "Device Self-test",
	LogTelemetryHost:            "Telemetry Host-Initiated",
	LogTelemetryController:      "Telemetry Controller-Initiated",
	LogEnduranceGroupInfo:       "Endurance Group Information",
	LogPredictableLatencyNVMSet: "Predictable Latency Per NVM Set",
	LogPredictableLatencyAggr:   "Predictable Latency Event Aggregate",
	LogANA:                      "Asymmetric Namespace Access",
	LogPersistentEvent:          "Persistent Event Log",
	LogEnduranceGroupEventAggr:  "Endurance Group Event Aggregate",
	LogMediaUnitStatus:          "Media Unit Status",
	LogSupportedCapacityConfig:  "Supported Capacity Configuration List",
	LogFeatureIDsSupported:      "Feature Identifiers Supported and Effects",
	LogNVMeMICommandsSupported:  "NVMe-MI Commands Supported and Effects",
	LogCommandFeatureLockdown:   "Command and Feature Lockdown",
	LogBootPartition:            "Boot Partition",
	LogRotationalMedia:          "Rotational Media Information",
	LogDiscovery:                "Discovery",
	LogReservationNotification:  "Reservation Notification",
	LogSanitizeStatus:           "Sanitize Status",
}

// String names the log page.
func (l LogPageID) String() string {
	if s, ok := logPageNames[l]; ok {
		return s
	}
	if l >= 0xc0 {
		return "Vendor Specific log 0x" + hex8(uint8(l))
	}
	return "Log page 0x" + hex8(uint8(l))
}

// GetLogPageCommand is the command specific part of Get Log Page (Base 2.0
// "Get Log Page Command"): CDW10 LID (7:0), LSP (14:8), RAE (15), NUMDL
// (31:16); CDW11 NUMDU (15:0), LSI (31:16); CDW12-13 LPO (offset in
// octets); CDW14 UUID index (6:0), OT (23), CSI (31:24).
type GetLogPageCommand struct {
	LID       LogPageID
	LSP       uint8
	RAE       bool
	NUMD      uint32 // NUMDU:NUMDL, number of dwords, 0's based
	LSI       uint16
	LPO       uint64
	UUIDIndex uint8
	OT        bool
	CSI       uint8
}

// Length returns the number of octets asked for: (NUMD+1)*4.
func (g GetLogPageCommand) Length() uint64 { return (uint64(g.NUMD) + 1) * 4 }

// GetLogPage reads the SQE as a Get Log Page command.
func (c *Command) GetLogPage() GetLogPageCommand {
	return GetLogPageCommand{
		LID:       LogPageID(c.CDW10),
		LSP:       uint8(c.CDW10>>8) & 0x7f,
		RAE:       c.CDW10&0x8000 != 0,
		NUMD:      uint32(c.CDW11&0xffff)<<16 | c.CDW10>>16,
		LSI:       uint16(c.CDW11 >> 16),
		LPO:       uint64(c.CDW13)<<32 | uint64(c.CDW12),
		UUIDIndex: uint8(c.CDW14 & 0x7f),
		OT:        c.CDW14&(1<<23) != 0,
		CSI:       uint8(c.CDW14 >> 24),
	}
}

// FeatureID is FID, the feature a Set/Get Features command names (Base 2.0
// "Feature Identifiers").
type FeatureID uint8

// Feature identifiers.
const (
	FeatureArbitration            FeatureID = 0x01
	FeaturePowerManagement        FeatureID = 0x02
	FeatureLBARangeType           FeatureID = 0x03
	FeatureTemperatureThreshold   FeatureID = 0x04
	FeatureErrorRecovery          FeatureID = 0x05
	FeatureVolatileWriteCache     FeatureID = 0x06
	FeatureNumberOfQueues         FeatureID = 0x07
	FeatureInterruptCoalescing    FeatureID = 0x08
	FeatureInterruptVectorConfig  FeatureID = 0x09
	FeatureWriteAtomicityNormal   FeatureID = 0x0a
	FeatureAsyncEventConfig       FeatureID = 0x0b
	FeatureAutonomousPowerState   FeatureID = 0x0c
	FeatureHostMemoryBuffer       FeatureID = 0x0d
	FeatureTimestamp              FeatureID = 0x0e
	FeatureKeepAliveTimer         FeatureID = 0x0f
	FeatureHostThermalMgmt        FeatureID = 0x10
	FeatureNonOpPowerStateConfig  FeatureID = 0x11
	FeatureReadRecoveryLevel      FeatureID = 0x12
	FeaturePredictableLatencyCfg  FeatureID = 0x13
	FeaturePredictableLatencyWin  FeatureID = 0x14
	FeatureHostBehaviorSupport    FeatureID = 0x16
	FeatureSanitizeConfig         FeatureID = 0x17
	FeatureEnduranceGroupEventCfg FeatureID = 0x18
	FeatureIOCommandSetProfile    FeatureID = 0x19
	FeatureSpinupControl          FeatureID = 0x1a
	FeatureSoftwareProgressMarker FeatureID = 0x80
	FeatureHostIdentifier         FeatureID = 0x81
	FeatureReservationNotifyMask  FeatureID = 0x82
	FeatureReservationPersistence FeatureID = 0x83
	FeatureNamespaceWriteProtect  FeatureID = 0x84
)

var featureNames = map[FeatureID]string{
	FeatureArbitration:            "Arbitration",
	FeaturePowerManagement:        "Power Management",
	FeatureLBARangeType:           "LBA Range Type",
	FeatureTemperatureThreshold:   "Temperature Threshold",
	FeatureErrorRecovery:          "Error Recovery",
	FeatureVolatileWriteCache:     "Volatile Write Cache",
	FeatureNumberOfQueues:         "Number of Queues",
	FeatureInterruptCoalescing:    "Interrupt Coalescing",
	FeatureInterruptVectorConfig:  "Interrupt Vector Configuration",
	FeatureWriteAtomicityNormal:   "Write Atomicity Normal",
	FeatureAsyncEventConfig:       "Asynchronous Event Configuration",
	FeatureAutonomousPowerState:   "Autonomous Power State Transition",
	FeatureHostMemoryBuffer:       "Host Memory Buffer",
	FeatureTimestamp:              "Timestamp",
	FeatureKeepAliveTimer:         "Keep Alive Timer",
	FeatureHostThermalMgmt:        "Host Controlled Thermal Management",
	FeatureNonOpPowerStateConfig:  "Non-Operational Power State Config",
	FeatureReadRecoveryLevel:      "Read Recovery Level Config",
	FeaturePredictableLatencyCfg:  "Predictable Latency Mode Config",
	FeaturePredictableLatencyWin:  "Predictable Latency Mode Window",
	FeatureHostBehaviorSupport:    "Host Behavior Support",
	FeatureSanitizeConfig:         "Sanitize Config",
	FeatureEnduranceGroupEventCfg: "Endurance Group Event Configuration",
	FeatureIOCommandSetProfile:    "I/O Command Set Profile",
	FeatureSpinupControl:          "Spinup Control",
	FeatureSoftwareProgressMarker: "Software Progress Marker",
	FeatureHostIdentifier:         "Host Identifier",
	FeatureReservationNotifyMask:  "Reservation Notification Mask",
	FeatureReservationPersistence: "Reservation Persistence",
	FeatureNamespaceWriteProtect:  "Namespace Write Protection Config",
}

// String names the feature.
func (f FeatureID) String() string {
	if s, ok := featureNames[f]; ok {
		return s
	}
	if f >= 0xc0 {
		return "Vendor Specific feature 0x" + hex8(uint8(f))
	}
	return "Feature 0x" + hex8(uint8(f))
}

// FeaturesCommand is the command specific part of Set Features and Get
// Features (Base 2.0 "Set Features Command", "Get Features Command"):
// CDW10 FID (7:0), SEL (Get, 10:8), SV (Set, 31); CDW11 the feature
// specific value (e.g. Number of Queues: NSQR 15:0, NCQR 31:16; Keep
// Alive Timer: KATO in ms); CDW14 UUID index (6:0).
type FeaturesCommand struct {
	FID       FeatureID
	SEL       uint8 // Get Features only
	SV        bool  // Set Features only
	CDW11     uint32
	UUIDIndex uint8
}

// Features reads the SQE as a Set Features or Get Features command.
func (c *Command) Features() FeaturesCommand {
	return FeaturesCommand{
		FID:       FeatureID(c.CDW10),
		SEL:       uint8(c.CDW10>>8) & 0x7,
		SV:        c.CDW10&(1<<31) != 0,
		CDW11:     c.CDW11,
		UUIDIndex: uint8(c.CDW14 & 0x7f),
	}
}

// NumberOfQueues returns NSQR and NCQR of a Number of Queues feature
// (both 0's based).
func (f FeaturesCommand) NumberOfQueues() (nsqr, ncqr uint16) {
	return uint16(f.CDW11), uint16(f.CDW11 >> 16)
}

// KATO returns the Keep Alive Timeout of a Keep Alive Timer feature, in
// milliseconds.
func (f FeaturesCommand) KATO() uint32 { return f.CDW11 }

// AbortCommand is the command specific part of Abort (Base 2.0 "Abort
// Command"): CDW10 SQID (15:0), CID (31:16) of the command to abort.
type AbortCommand struct {
	SQID uint16
	CID  uint16
}

// Abort reads the SQE as an Abort command.
func (c *Command) Abort() AbortCommand {
	return AbortCommand{SQID: uint16(c.CDW10), CID: uint16(c.CDW10 >> 16)}
}

// RWCommand is the command specific part of the NVM commands that address
// a range of logical blocks: Read, Write, Compare, Write Zeroes, Write
// Uncorrectable, Verify (NVM Command Set 1.0 "Read Command", "Write
// Command", ...):
//
//	CDW10-11 SLBA  starting LBA (64 bits)
//	CDW12    NLB (15:0, 0's based), DTYPE (23:20, Write), STC (24),
//	         DEAC (25, Write Zeroes), PRINFO (29:26), FUA (30), LR (31)
//	CDW13    DSM (7:0: access frequency 3:0, access latency 5:4,
//	         sequential request 6, incompressible 7), DSPEC (31:16)
//	CDW14    EILBRT (Read, Compare; ILBRT for Write): initial logical block
//	         reference tag
//	CDW15    ELBAT (15:0), ELBATM (31:16): logical block application tag
//	         and mask (LBAT/LBATM for Write)
type RWCommand struct {
	SLBA   uint64
	NLB    uint16 // 0's based
	DTYPE  uint8
	DEAC   bool
	PRINFO uint8
	FUA    bool
	LR     bool
	DSM    uint8
	DSPEC  uint16
	EILBRT uint32
	ELBAT  uint16
	ELBATM uint16
}

// Blocks returns the number of logical blocks, NLB+1.
func (r RWCommand) Blocks() uint32 { return uint32(r.NLB) + 1 }

// RW reads the SQE as a command with an LBA range.
func (c *Command) RW() RWCommand {
	return RWCommand{
		SLBA:   uint64(c.CDW11)<<32 | uint64(c.CDW10),
		NLB:    uint16(c.CDW12),
		DTYPE:  uint8(c.CDW12>>20) & 0xf,
		DEAC:   c.CDW12&(1<<25) != 0,
		PRINFO: uint8(c.CDW12>>26) & 0xf,
		FUA:    c.CDW12&(1<<30) != 0,
		LR:     c.CDW12&(1<<31) != 0,
		DSM:    uint8(c.CDW13),
		DSPEC:  uint16(c.CDW13 >> 16),
		EILBRT: c.CDW14,
		ELBAT:  uint16(c.CDW15),
		ELBATM: uint16(c.CDW15 >> 16),
	}
}

// DSMCommand is the command specific part of Dataset Management (NVM
// Command Set 1.0 "Dataset Management command"): CDW10 NR (7:0, number of
// ranges, 0's based); CDW11 IDR (0), IDW (1), AD (2, deallocate).
type DSMCommand struct {
	NR  uint8
	IDR bool
	IDW bool
	AD  bool
}

// Ranges returns the number of ranges, NR+1.
func (d DSMCommand) Ranges() int { return int(d.NR) + 1 }

// DSM reads the SQE as a Dataset Management command.
func (c *Command) DSM() DSMCommand {
	return DSMCommand{NR: uint8(c.CDW10), IDR: c.CDW11&1 != 0, IDW: c.CDW11&2 != 0, AD: c.CDW11&4 != 0}
}

// DSMRangeLen is the size of one Dataset Management range.
const DSMRangeLen = 16

// DSMRange is one range of a Dataset Management command's data (NVM
// Command Set 1.0 "Dataset Management - Range Definition"): octets 0-3
// context attributes, 4-7 length in logical blocks, 8-15 starting LBA.
type DSMRange struct {
	ContextAttributes uint32
	LengthLBAs        uint32
	SLBA              uint64
}

// DecodeFromBytes decodes the range at the start of data.
func (r *DSMRange) DecodeFromBytes(data []byte) error {
	if len(data) < DSMRangeLen {
		*r = DSMRange{}
		return errShortDSMRange
	}
	r.ContextAttributes = binary.LittleEndian.Uint32(data[0:])
	r.LengthLBAs = binary.LittleEndian.Uint32(data[4:])
	r.SLBA = binary.LittleEndian.Uint64(data[8:])
	return nil
}
