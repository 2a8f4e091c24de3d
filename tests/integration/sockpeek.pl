#!/usr/bin/perl
# sockpeek.pl: an integration-test helper that rawclient cannot replace.
#
# usage: perl sockpeek.pl SOCKET SECONDS < hex
#
# Connects to the broker's unix socket, sends the bytes of the hex on
# stdin (whitespace ignored), then reads until the peer closes the
# connection or SECONDS pass. Prints one line:
#
#   frames=N eof=1|0 trailing=B
#
# N is the number of complete reply frames (4-byte big-endian length +
# body) received, eof=1 when the peer closed the connection, B the bytes
# left over that do not make a whole frame. It lets a test tell "the
# broker answered once and then hung up" from "it kept the connection".
use strict;
use warnings;
use Socket;

die "usage: sockpeek.pl SOCKET SECONDS < hex\n" unless @ARGV == 2;
my ($path, $secs) = @ARGV;

local $/;
my $hex = <STDIN>;
$hex = '' unless defined $hex;
$hex =~ s/\s+//g;
die "sockpeek: bad hex\n" if $hex =~ /[^0-9a-fA-F]/ || length($hex) % 2;
my $out = pack('H*', $hex);

socket(my $s, PF_UNIX, SOCK_STREAM, 0) or die "sockpeek: socket: $!\n";
connect($s, sockaddr_un($path)) or die "sockpeek: connect $path: $!\n";
$SIG{PIPE} = 'IGNORE';
my $off = 0;
while ($off < length $out) {
	my $n = syswrite($s, $out, length($out) - $off, $off);
	last unless defined $n && $n > 0;   # the broker may hang up early
	$off += $n;
}

my ($buf, $eof) = ('', 0);
my $deadline = time + $secs;
while (time <= $deadline) {
	my $rin = '';
	vec($rin, fileno($s), 1) = 1;
	my $left = $deadline - time;
	$left = 0.2 if $left < 0.2;
	my $nf = select(my $rout = $rin, undef, undef, $left);
	next if $nf <= 0;
	my $n = sysread($s, my $chunk, 65536);
	if (!defined $n || $n == 0) {      # ECONNRESET counts as closed too
		$eof = 1;
		last;
	}
	$buf .= $chunk;
}

my $frames = 0;
while (length($buf) >= 4) {
	my $len = unpack('N', substr($buf, 0, 4));
	last if length($buf) < 4 + $len;
	substr($buf, 0, 4 + $len) = '';
	$frames++;
}
printf "frames=%d eof=%d trailing=%d\n", $frames, $eof, length($buf);
exit 0;
