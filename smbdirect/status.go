package smbdirect

// Status is an NTSTATUS code ([MS-ERREF] 2.3): the SMB Direct Negotiate
// Response's Status and an SMB2 response's.
type Status uint32

// The codes a capture of SMB Direct commonly shows ([MS-ERREF] 2.3.1).
const (
	StatusSuccess                Status = 0x00000000
	StatusPending                Status = 0x00000103
	StatusNotifyEnumDir          Status = 0x0000010c
	StatusBufferOverflow         Status = 0x80000005
	StatusNoMoreFiles            Status = 0x80000006
	StatusInvalidHandle          Status = 0xc0000008
	StatusInvalidParameter       Status = 0xc000000d
	StatusNoSuchFile             Status = 0xc000000f
	StatusInvalidDeviceRequest   Status = 0xc0000010
	StatusEndOfFile              Status = 0xc0000011
	StatusMoreProcessingRequired Status = 0xc0000016
	StatusAccessDenied           Status = 0xc0000022
	StatusBufferTooSmall         Status = 0xc0000023
	StatusObjectNameInvalid      Status = 0xc0000033
	StatusObjectNameNotFound     Status = 0xc0000034
	StatusObjectNameCollision    Status = 0xc0000035
	StatusObjectPathNotFound     Status = 0xc000003a
	StatusSharingViolation       Status = 0xc0000043
	StatusLogonFailure           Status = 0xc000006d
	StatusDiskFull               Status = 0xc000007f
	StatusInsufficientResources  Status = 0xc000009a
	StatusFileIsADirectory       Status = 0xc00000ba
	StatusNotSupported           Status = 0xc00000bb
	StatusNetworkNameDeleted     Status = 0xc00000c9
	StatusBadNetworkName         Status = 0xc00000cc
	StatusDirectoryNotEmpty      Status = 0xc0000101
	StatusNotADirectory          Status = 0xc0000103
	StatusCancelled              Status = 0xc0000120
	StatusFileClosed             Status = 0xc0000128
	StatusFSDriverRequired       Status = 0xc000019c
	StatusUserSessionDeleted     Status = 0xc0000203
	StatusNotFound               Status = 0xc0000225
)

var statusNames = map[Status]string{
	StatusSuccess:                "STATUS_SUCCESS",
	StatusPending:                "STATUS_PENDING",
	StatusNotifyEnumDir:          "STATUS_NOTIFY_ENUM_DIR",
	StatusBufferOverflow:         "STATUS_BUFFER_OVERFLOW",
	StatusNoMoreFiles:            "STATUS_NO_MORE_FILES",
	StatusInvalidHandle:          "STATUS_INVALID_HANDLE",
	StatusInvalidParameter:       "STATUS_INVALID_PARAMETER",
	StatusNoSuchFile:             "STATUS_NO_SUCH_FILE",
	StatusInvalidDeviceRequest:   "STATUS_INVALID_DEVICE_REQUEST",
	StatusEndOfFile:              "STATUS_END_OF_FILE",
	StatusMoreProcessingRequired: "STATUS_MORE_PROCESSING_REQUIRED",
	StatusAccessDenied:           "STATUS_ACCESS_DENIED",
	StatusBufferTooSmall:         "STATUS_BUFFER_TOO_SMALL",
	StatusObjectNameInvalid:      "STATUS_OBJECT_NAME_INVALID",
	StatusObjectNameNotFound:     "STATUS_OBJECT_NAME_NOT_FOUND",
	StatusObjectNameCollision:    "STATUS_OBJECT_NAME_COLLISION",
	StatusObjectPathNotFound:     "STATUS_OBJECT_PATH_NOT_FOUND",
	StatusSharingViolation:       "STATUS_SHARING_VIOLATION",
	StatusLogonFailure:           "STATUS_LOGON_FAILURE",
	StatusDiskFull:               "STATUS_DISK_FULL",
	StatusInsufficientResources:  "STATUS_INSUFFICIENT_RESOURCES",
	StatusFileIsADirectory:       "STATUS_FILE_IS_A_DIRECTORY",
	StatusNotSupported:           "STATUS_NOT_SUPPORTED",
	StatusNetworkNameDeleted:     "STATUS_NETWORK_NAME_DELETED",
	StatusBadNetworkName:         "STATUS_BAD_NETWORK_NAME",
	StatusDirectoryNotEmpty:      "STATUS_DIRECTORY_NOT_EMPTY",
	StatusNotADirectory:          "STATUS_NOT_A_DIRECTORY",
	StatusCancelled:              "STATUS_CANCELLED",
	StatusFileClosed:             "STATUS_FILE_CLOSED",
	StatusFSDriverRequired:       "STATUS_FS_DRIVER_REQUIRED",
	StatusUserSessionDeleted:     "STATUS_USER_SESSION_DELETED",
	StatusNotFound:               "STATUS_NOT_FOUND",
}

// String names the status as tshark does ("STATUS_SUCCESS"), the number
// in hex ("0xc0000999") for one not in the table.
func (s Status) String() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return "0x" + hex32(uint32(s))
}

// Severity is the status's top two bits ([MS-ERREF] 2.3): 0 success, 1
// informational, 2 warning, 3 error.
func (s Status) Severity() uint8 { return uint8(s >> 30) }

// OK reports whether the status is no error: success, informational or
// warning severity, or STATUS_MORE_PROCESSING_REQUIRED (an SMB2
// SESSION_SETUP leg that continues the authentication, [MS-SMB2] 3.3.5.5).
func (s Status) OK() bool { return s.Severity() != 3 || s == StatusMoreProcessingRequired }
