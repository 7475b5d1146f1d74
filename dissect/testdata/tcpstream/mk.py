import struct,sys
def csum(b):
    if len(b)%2: b+=b'\0'
    s=sum(struct.unpack('!%dH'%(len(b)//2),b))
    while s>>16: s=(s&0xffff)+(s>>16)
    return (~s)&0xffff
def frame(src,dst,sp,dp,seq,ack,flags,payload=b''):
    tcp=struct.pack('!HHIIBBHHH',sp,dp,seq,ack,5<<4,flags,65535,0,0)+payload
    ph=bytes(src)+bytes(dst)+struct.pack('!BBH',0,6,len(tcp))
    c=csum(ph+tcp); tcp=tcp[:16]+struct.pack('!H',c)+tcp[18:]
    ip=struct.pack('!BBHHHBBH4s4s',0x45,0,20+len(tcp),0,0x4000,64,6,0,bytes(src),bytes(dst))
    ip=ip[:10]+struct.pack('!H',csum(ip))+ip[12:]
    mac=lambda x: bytes([0x52,0x54,0,0,2,x])
    return mac(dst[3])+mac(src[3])+b'\x08\x00'+ip+tcp
C=[192,0,2,2]; S=[192,0,2,1]
SYN,ACK,RST,FIN,PSH=2,16,4,1,8
def write(name,frames):
    f=open(name,'wb'); f.write(struct.pack('<IHHiIII',0xa1b2c3d4,2,4,0,0,65535,1))
    for i,fr in enumerate(frames):
        f.write(struct.pack('<IIII',1700000000,i*1000,len(fr),len(fr))); f.write(fr)
X=1000; Y=500000; Z=9000
# 1: SYN X, RST, SYN X again (same ISN), SYN-ACK, ACK
write('rst-then-same-isn.pcap',[frame(C,S,40000,20049,X,0,SYN),frame(S,C,20049,40000,0,X+1,RST|ACK),
  frame(C,S,40000,20049,X,0,SYN),frame(S,C,20049,40000,Z,X+1,SYN|ACK),frame(C,S,40000,20049,X+1,Z+1,ACK)])
# 2: SYN X, SYN X (retrans), SYN-ACK, ACK, FIN/FIN, SYN X (same isn after close), SYN Y (new)
write('closed-then-syn.pcap',[frame(C,S,40001,20049,X,0,SYN),frame(C,S,40001,20049,X,0,SYN),frame(S,C,20049,40001,Z,X+1,SYN|ACK),
  frame(C,S,40001,20049,X+1,Z+1,ACK),frame(C,S,40001,20049,X+1,Z+1,FIN|ACK),frame(S,C,20049,40001,Z+1,X+2,FIN|ACK),frame(C,S,40001,20049,X+2,Z+2,ACK),
  frame(C,S,40001,20049,X,0,SYN),frame(C,S,40001,20049,Y,0,SYN),frame(S,C,20049,40001,Z,Y+1,SYN|ACK)])
# 3: no close, SYN with other ISN
write('open-then-new-isn.pcap',[frame(C,S,40002,20049,X,0,SYN),frame(S,C,20049,40002,Z,X+1,SYN|ACK),frame(C,S,40002,20049,X+1,Z+1,ACK),
  frame(C,S,40002,20049,Y,0,SYN),frame(S,C,20049,40002,Z+7,Y+1,SYN|ACK)])
write('midstream-then-syn.pcap',[frame(C,S,40003,20049,X+1,Z+1,ACK|PSH,b'abcd'),frame(C,S,40003,20049,X,0,SYN),frame(C,S,40003,20049,X+5,Z+1,ACK),frame(C,S,40003,20049,X+4,0,SYN)])
