#!/usr/bin/perl
# minion.pl - qchaos adapter for Minion 10 with Mojo::Pg (docs/adapters.md).
#
# The library runs its own worker (Minion::Worker->run: register and
# heartbeat, dequeue, fork a child per job, finish in the parent or fail in
# the child, repair: jobs of workers without a heartbeat for missing_after
# seconds are failed "Worker went away" and retried).  The adapter only
# watches: Minion::Backend::Pg::dequeue and Minion::Job::finish / fail are
# wrapped; each wrapper tells qchaos the request and its answer and returns
# what the library's own function returned.
#
# What Minion exposes: a claim (Backend::Pg::_try) writes started = NOW()
# and worker; finish and fail (Backend::Pg::_update) match id AND retries AND
# state 'active', and every retry bumps retries: (id, retries) is the claim's
# token, reported as "r<retries>".  There is no per-job lease: a job is lost
# when its worker misses heartbeats for missing_after seconds (repair), so
# no lease_until is reported.
use strict;
use warnings;
use Minion;
use Mojo::JSON qw(encode_json decode_json);
use Time::HiRes qw(sleep time);
use POSIX ();

$| = 1;
my %env = (
    role        => $ENV{QCHAOS_ROLE} // 'worker',
    app         => $ENV{QCHAOS_APP_NAME} // 'qchaos-minion',
    lease_ms    => $ENV{QCHAOS_LEASE_MS} // 5000,
    attempts    => $ENV{QCHAOS_MAX_ATTEMPTS} // 3,
    retry_ms    => $ENV{QCHAOS_RETRY_DELAY_MS} // 0,
    poll_ms     => $ENV{QCHAOS_POLL_MS} // 500,
    queue       => $ENV{QCHAOS_QUEUE} // 'qchaos',
);

sub send_msg { syswrite STDOUT, encode_json($_[0]) . "\n" }
sub logmsg   { print STDERR "[$env{app}] @_\n" }

# One line from qchaos, read byte by byte: a forked job child shares stdin
# with its parent, and neither may buffer what the other is to read.
sub read_msg {
    my $line = '';
    while (1) {
        my $n = sysread STDIN, my $c, 1;
        POSIX::_exit(0) unless $n;    # qchaos is gone
        last if $c eq "\n";
        $line .= $c;
    }
    my $m = decode_json($line);
    POSIX::_exit(0) if $m->{type} eq 'stop';    # the run is over
    return $m;
}

# Sends msg and waits for qchaos's answer (types listed) for msg's job.
sub ask {
    my ($msg, @types) = @_;
    send_msg($msg);
    while (1) {
        my $a = read_msg();
        return $a if grep { $_ eq $a->{type} } @types;
        logmsg("unexpected answer $a->{type} while waiting for @types");
    }
}

my $minion = Minion->new(Pg => 'postgresql://');    # libpq reads PG* (PGAPPNAME too)
$minion->backend->pg->search_path(['qchaos_minion', 'public']);
$minion->missing_after($env{lease_ms} / 1000);

{
    no warnings 'redefine';
    my $dequeue = \&Minion::Backend::Pg::dequeue;
    *Minion::Backend::Pg::dequeue = sub {
        send_msg({type => 'fetching'});
        my $job = $dequeue->(@_);
        send_msg({type => 'polled', rows => 0}) unless $job;
        return $job;
    };
    for my $op (qw(finish fail)) {
        my $orig = \&{"Minion::Job::$op"};
        no strict 'refs';
        *{"Minion::Job::$op"} = sub {
            my $job = shift;
            my $qc  = $job->args->[0]{qc_id};
            my ($inv, $ans) = $op eq 'finish' ? ('completing', 'completed') : ('failing', 'failed');
            ask({type => $inv, job => $qc}, 'go') if defined $qc;
            my $ok = eval { $orig->($job, @_) };
            my $err = $@;
            if (defined $qc) {
                send_msg($err ? {type => $ans, job => $qc, outcome => 'info', error => "$err"}
                              : {type => $ans, job => $qc, rows => $ok ? 1 : 0});
            }
            die $err if $err;
            return $ok;
        };
    }
}

$minion->add_task(qchaos => sub {
    my ($job, $arg) = @_;
    my $info = $job->info;
    my $claim = {
        type    => 'claimed',
        job     => $arg->{qc_id},
        lib_id  => $job->id,
        attempt => $job->retries + 1,
        token   => 'r' . $job->retries,
        now_ms  => $info->{started} * 1000,
    };
    my $run = ask($claim, 'run');
    sleep($run->{work_ms} / 1000) if $run->{work_ms};
    my $eff = ask({type => 'effect', job => $arg->{qc_id}, op_key => $run->{op_key}}, 'effect_ok', 'effect_failed');
    die "$eff->{error}\n" if $eff->{type} eq 'effect_failed';
});

if ($env{role} ne 'worker') {
    # the first connection migrates Minion's tables (auto_migrate) into
    # qchaos_minion, which the library file's setup created
    $minion->backend->pg->db->query('SELECT 1');
    send_msg({type => 'hello', library => 'Minion', version => $Minion::VERSION, exposes => [qw(attempt token now_ms rows)]});
    while (1) {
        my $m = read_msg();
        next unless $m->{type} eq 'enqueue';
        my @out;
        for my $j (@{$m->{jobs}}) {
            my $id = $minion->enqueue(qchaos => [{qc_id => $j->{job}, payload => $j->{payload}}],
                {attempts => $env{attempts}, queue => $env{queue}});
            push @out, {job => $j->{job}, lib_id => "$id"};
        }
        send_msg({type => 'enqueued', jobs => \@out});
    }
}

# Minion's retry delay is its own backoff (retries ** 4 + 15 s), unless the
# app sets it: the scenario's retry_delay_ms, as the other adapters do
$minion->backoff(sub { $env{retry_ms} / 1000 });
send_msg({type => 'hello', library => 'Minion', version => $Minion::VERSION, exposes => [qw(attempt token now_ms rows)]});
my $worker = $minion->worker;
$worker->status->{jobs}               = 1;
$worker->status->{queues}             = [$env{queue}];
$worker->status->{dequeue_timeout}    = $env{poll_ms} / 1000;
$worker->status->{heartbeat_interval} = $env{lease_ms} / 3000;
$worker->status->{repair_interval}    = 1;
$worker->run;
