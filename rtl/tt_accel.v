`default_nettype none
// tt_accel: the accelerator top. An AXI4-Lite host interface (tt_axil_slave) onto a register file and windows
// of every memory; the program memory; the sequencer (tt_seq) that runs programs op by op on the contraction
// engine (tt_contract), the element-wise unit (tt_ewise), the softmax cross-entropy unit (tt_sce) and, with
// RANK, the rank-update unit (tt_rank); and the data memory (tt_banks). golden/program.py assembles the programs, verif/host.py is the host driver.
//
// Host address map (golden/arch.py: Reg, Ctrl, Status, the windows; rtl/tt_arch.vh is generated from it). The AXI
// byte address is 4 x the word address, whose bits [WIN_LSB +: WIN_W] select the window:
//   WIN_REG   registers: control (CTRL's pulses), STATUS, ERROR (the sequencer's code, the unit's code, the op's pc),
//             the start pc, label, seed, LFSR state, prediction and p[label], the cycle, op and saturation counters,
//             the sample stream's (below), and the parameters the build was made with (P_*);
//   WIN_PROG  the program memory (32-bit words);
//   WIN_STAT  the statistics: word 2s = saturations of slot s, 2s+1 = its max |x| register;
//   WIN_BANK0 + b: bank b's words (reads sign-extended to 32 bits, writes keep the low bits); banks 0..3 always,
//             bank 4 (the moment bank) with ADAM.
// Memory and program windows are open only while the sequencer is not running: an access while it runs, an
// address outside a bank or a window, or a write to a read-only register ends with SLVERR and changes nothing.
// A start while running stops the program after the running op with error 6 (tt_seq).
//
// Sample stream (AXI4-Stream, one 16-bit word a beat): a frame is STREAM_WORDS sample words, written to the data
// memory from global element address STREAM_BASE up (golden/program.py: bank << BANK_SHIFT | offset), then one
// beat whose low bits are the label (LABEL), with tlast on it and on no other beat. A complete frame starts the
// program at START_PC, as a CTRL start would, and takes one of STREAM_FRAMES (the frames the host allows; it
// reads back the ones left). tready is low while the sequencer runs or has stopped on an error, while a frame
// waits for its run to start, when no frame is allowed, and in a cycle the host writes a bank: a frame for the
// next sample waits for the current one to finish, and nothing is lost. A frame with tlast early or missing, or
// a word outside every bank, sets STATUS b3 (until CTRL clear error) and starts nothing: the words after the
// error are dropped up to tlast, and only the sample's own words may have been written.
module tt_accel #(
  // The banks (golden/program.py BANKS): words, bits per word, read ports (2 where an op reads two operands
  // from the bank in one cycle). Every bank's words fit a window of 2^BANK_SHIFT.
  parameter integer BANK_SHIFT   = 12,
  parameter integer ACT_DEPTH    = 4096,
  parameter integer ACT_WIDTH    = 16,
  parameter integer ACT_PORTS    = 2,
  parameter integer CORE_DEPTH   = 2048,
  parameter integer CORE_WIDTH   = 4,
  parameter integer CORE_PORTS   = 1,
  parameter integer MASTER_DEPTH = 2048,
  parameter integer MASTER_WIDTH = 8,
  parameter integer MASTER_PORTS = 1,
  parameter integer STATE_DEPTH  = 4096,
  parameter integer STATE_WIDTH  = 16,
  parameter integer STATE_PORTS  = 2,
  // Bank 4, built with ADAM only: Adam's 32-bit second moments, apart from the 16-bit state bank so that only
  // they are 32 bits wide and in one copy (an op reads one v at a time).
  parameter integer MOMENT_DEPTH = 4096,
  parameter integer MOMENT_WIDTH = 32,
  parameter integer MOMENT_PORTS = 1,
  parameter integer PROG_AW      = 11,
  parameter integer PROG_DEPTH   = 2048,
  // Registers around the bank routing and RAMs, for Fmax. 1: requests in, routed requests, RAM outputs, read data
  // out (read latency 5 instead of 1), so descriptor -> address -> unit mux, the routing, and RAM -> mux -> datapath
  // each get a cycle. 2: also a fabric register behind each block RAM's own output register (latency 6), so the
  // route from a block RAM across the chip and the multiplexers behind it each get a cycle.
  parameter integer MEM_PIPE     = 2,
  // Bits of one block RAM of the target part (16384: ECP5 DP16KD, Xilinx RAMB18): each bank copy is built from
  // memories of that size, each with its own read and output registers (tt_bank), for Fmax. 0: one memory per
  // copy (the iCE40 target: its clock is low and the per-block registers cost logic cells it does not have).
  parameter integer RAM_BLOCK_BITS = 16384,
  // The contraction engine's MAC lanes and the words of each lane's buffer (tt_contract; golden/program.py
  // AccelParams lanes and buf_depth: the compiler uses lanes only where a contraction's b operand fits).
  parameter integer LANES        = 1,
  parameter integer BUF_DEPTH    = 1,
  // 1: two buffer sets, a contraction preloads the next one's b (tt_contract PRELOAD); 0: one set, half the memory
  parameter integer PRELOAD      = 1,
  // Vector loads (tt_contract VEC): the banks whose bit is set in VEC_BANKS (bit b: bank b) are built in rows of VEC
  // words, from which the contraction engine loads its lane buffers VEC words a cycle (golden/program.py AccelParams
  // vec and bank_vec: the banks the programs' vector loads read).
  parameter integer VEC          = 1,
  parameter integer VEC_BANKS    = 0,
  // The contraction engine's wide drain (tt_contract DRAIN): DRAIN elements requantised and written a cycle, as a run
  // of a row of a bank in VEC_BANKS (golden/program.py AccelParams drain; bank_vec also names the banks written so).
  parameter integer DRAIN        = 1,
  // The contraction engine's accumulator bits: the network's bound is enough (golden/ir.py accumulator_bits;
  // SPEC 1.2: no legal program's sum needs more), and the assembler refuses a program that needs more.
  parameter integer ACC_W        = 48,
  // 1: the element-wise unit has Adam's ops (tt_ewise ADAM) and the data memory the moment bank (bank 4); the data
  // paths between the banks and the element-wise unit follow the widest bank (the moments' 32 bits).
  parameter integer ADAM         = 0,
  // 1: the rank-update unit (tt_rank: SPEC 5.6's sums of squares, lambda, pruning decision and tau on chip), for a
  // network that adapts its ranks (golden/program.py AccelParams.rank); its RANK records are illegal without it.
  parameter integer RANK         = 0,
  // The technology of the memories and multipliers (rtl/prim/: "generic", "ecp5" or "ice40").
  parameter [63:0] TECH         = "generic"
) (
  input  wire        clk,
  input  wire        rst,
  input  wire [23:0] s_axil_awaddr,
  input  wire [2:0]  s_axil_awprot,
  input  wire        s_axil_awvalid,
  output wire        s_axil_awready,
  input  wire [31:0] s_axil_wdata,
  input  wire [3:0]  s_axil_wstrb,
  input  wire        s_axil_wvalid,
  output wire        s_axil_wready,
  output wire [1:0]  s_axil_bresp,
  output wire        s_axil_bvalid,
  input  wire        s_axil_bready,
  input  wire [23:0] s_axil_araddr,
  input  wire [2:0]  s_axil_arprot,
  input  wire        s_axil_arvalid,
  output wire        s_axil_arready,
  output wire [31:0] s_axil_rdata,
  output wire [1:0]  s_axil_rresp,
  output wire        s_axil_rvalid,
  input  wire        s_axil_rready,
  input  wire [15:0] s_axis_tdata,
  input  wire        s_axis_tvalid,
  output wire        s_axis_tready,
  input  wire        s_axis_tlast,
  output wire        done,   // the last program reached END (level until the next start)
  output wire        error   // the sequencer stopped on an error
);

`include "tt_desc_fields.vh"
`include "tt_arch.vh"
  localparam integer ADDR_W = GADDR_W;
  // The banks' data paths and the element-wise unit: the widest bank, at least 16 bits. The contraction engine and
  // the softmax unit work on 16-bit words (UNIT_W): narrower banks sign-extend, and they never touch a wider word.
  localparam integer UNIT_W = 16;
  localparam integer W01 = (ACT_WIDTH > CORE_WIDTH) ? ACT_WIDTH : CORE_WIDTH;
  localparam integer W23 = (MASTER_WIDTH > STATE_WIDTH) ? MASTER_WIDTH : STATE_WIDTH;
  localparam integer W03 = (W01 > W23) ? W01 : W23;
  localparam integer W_MAX = (ADAM != 0 && MOMENT_WIDTH > W03) ? MOMENT_WIDTH : W03;
  localparam integer DATA_W = (W_MAX > UNIT_W) ? W_MAX : UNIT_W;
  localparam integer MAX_W = UNIT_W;  // the max |x| registers: adaptive tensors are at most 16 bits
  localparam integer N_W = SCE_N_W;
  localparam integer DESC_BITS = 32 * DESC_WORDS;
  // the element-wise, softmax and rank units' descriptor copy: their longest payload
  localparam integer UNIT_WORDS = (EW_WORDS > SCE_WORDS && EW_WORDS > RK_WORDS) ? EW_WORDS :
                                  (SCE_WORDS > RK_WORDS) ? SCE_WORDS : RK_WORDS;
  // tt_banks takes the bank parameters packed, bank 0 in the LSBs; the moment bank is bank 4, with ADAM only
  localparam integer NBANK = (ADAM != 0) ? 5 : 4;
  localparam integer BB = (ADAM != 0) ? 3 : 2;  // bank field of a global address (tt_banks)
  localparam [159:0] BANK_DEPTH = {MOMENT_DEPTH[31:0], STATE_DEPTH[31:0], MASTER_DEPTH[31:0], CORE_DEPTH[31:0],
                                   ACT_DEPTH[31:0]};
  localparam [159:0] BANK_WIDTH = {MOMENT_WIDTH[31:0], STATE_WIDTH[31:0], MASTER_WIDTH[31:0], CORE_WIDTH[31:0],
                                   ACT_WIDTH[31:0]};
  localparam [159:0] BANK_PORTS = {MOMENT_PORTS[31:0], STATE_PORTS[31:0], MASTER_PORTS[31:0], CORE_PORTS[31:0],
                                   ACT_PORTS[31:0]};
  localparam [31:0] VB = VEC_BANKS;
  localparam [159:0] BANK_VEC = {31'd0, VB[4], 31'd0, VB[3], 31'd0, VB[2], 31'd0, VB[1], 31'd0, VB[0]};

  generate
    if (BANK_SHIFT < 1 || BANK_SHIFT > 18) begin : g_bad_shift
      error_tt_accel_BANK_SHIFT_must_be_1_to_18 u_error ();  // a bank window holds 2^18 words
    end
    if (BANK_SHIFT + BB > ADDR_W) begin : g_bad_space
      error_tt_accel_BANK_SHIFT_leaves_no_room_for_the_bank_field u_error ();  // 17 at most with the moment bank
    end
    if (PROG_AW < 8 || PROG_AW > 18) begin : g_bad_prog_aw
      error_tt_accel_PROG_AW_must_be_8_to_18 u_error ();
    end
    if (VEC_BANKS < 0 || VEC_BANKS >= (1 << NBANK)) begin : g_bad_vec_banks
      error_tt_accel_VEC_BANKS_must_name_built_banks u_error ();
    end
    if (MEM_PIPE < 0 || MEM_PIPE > 2) begin : g_bad_mem_pipe
      error_tt_accel_MEM_PIPE_must_be_0_to_2 u_error ();
    end
    if (ADAM < 0 || ADAM > 1) begin : g_bad_adam
      error_tt_accel_ADAM_must_be_0_or_1 u_error ();
    end
    if (RANK < 0 || RANK > 1) begin : g_bad_rank
      error_tt_accel_RANK_must_be_0_or_1 u_error ();
    end
    if (W_MAX > 32) begin : g_bad_width
      error_tt_accel_bank_widths_must_be_at_most_32 u_error ();
    end
  endgenerate
  localparam integer MEM_PIPED = (MEM_PIPE > 0) ? 1 : 0;  // the request and read-data registers
  localparam integer MEM_LAT = 1 + 3 * MEM_PIPED + MEM_PIPE;  // bank read latency every unit is built for

  // ---- host bus ----
  wire        bus_req;
  wire        bus_we;
  wire [21:0] bus_addr;
  wire [31:0] bus_wdata;
  wire [3:0]  bus_wstrb;
  reg         bus_ack_q;
  reg  [31:0] bus_rdata;
  reg         bus_err;

  tt_axil_slave #(.ADDR_W(24), .DATA_W(32)) u_axil (
    .clk (clk), .rst (rst),
    .s_axil_awaddr (s_axil_awaddr), .s_axil_awprot (s_axil_awprot), .s_axil_awvalid (s_axil_awvalid),
    .s_axil_awready (s_axil_awready), .s_axil_wdata (s_axil_wdata), .s_axil_wstrb (s_axil_wstrb),
    .s_axil_wvalid (s_axil_wvalid), .s_axil_wready (s_axil_wready), .s_axil_bresp (s_axil_bresp),
    .s_axil_bvalid (s_axil_bvalid), .s_axil_bready (s_axil_bready), .s_axil_araddr (s_axil_araddr),
    .s_axil_arprot (s_axil_arprot), .s_axil_arvalid (s_axil_arvalid), .s_axil_arready (s_axil_arready),
    .s_axil_rdata (s_axil_rdata), .s_axil_rresp (s_axil_rresp), .s_axil_rvalid (s_axil_rvalid),
    .s_axil_rready (s_axil_rready),
    .bus_req (bus_req), .bus_we (bus_we), .bus_addr (bus_addr), .bus_wdata (bus_wdata),
    .bus_wstrb (bus_wstrb), .bus_ack (bus_ack_q), .bus_rdata (bus_rdata), .bus_err (bus_err)
  );

  // A transaction takes effect in its first cycle (req && !ack) and is acknowledged in the next, a bank read
  // when its data arrives (MEM_LAT cycles later).
  reg  [2:0]  host_rd_wait_q;  // cycles until the data of a host bank read in flight
  wire        bus_go = bus_req && !bus_ack_q && (host_rd_wait_q == 3'd0);
  wire [WIN_W-1:0]     win = bus_addr[WIN_LSB +: WIN_W];
  wire [REG_IDX_W-1:0] reg_idx = bus_addr[REG_IDX_W-1:0];
  // 2^REG_IDX_W register words; the rest of the window errs
  wire        win_reg = (win == WIN_REG) && (bus_addr[WIN_LSB-1:REG_IDX_W] == {(WIN_LSB-REG_IDX_W){1'b0}});
  wire        win_prog = (win == WIN_PROG);
  wire        win_stat = (win == WIN_STAT);
  // the statistics window: two words a slot (address bit 0), the saturation count first
  localparam integer STAT_AW = HDR_SLOT_W + 1;
  generate
    if (STAT_WORDS_PER_SLOT != 2) begin : g_bad_stat_words
      error_tt_accel_STAT_WORDS_PER_SLOT_must_be_2 u_error ();
    end
  endgenerate
  wire [HDR_SLOT_W-1:0] stat_slot = bus_addr[STAT_AW-1:1];
  wire        stat_in = bus_addr[WIN_LSB-1:STAT_AW] == {(WIN_LSB-STAT_AW){1'b0}};
  // A bank window holds 2^BANK_SHIFT words: higher word-address bits must be 0, or they would reach the next bank.
  wire        win_bank = (win >= WIN_BANK0) && (win < WIN_BANK0 + NBANK[WIN_W-1:0]) &&
                         ((bus_addr[WIN_LSB-1:0] >> BANK_SHIFT) == {WIN_LSB{1'b0}});
  wire [2:0]  host_bank = win[2:0] - WIN_BANK0[2:0];  // banks 0..4 (win < WIN_BANK0 + NBANK)
  // Decoded here, not from tt_banks' addr_err, which comes MEM_PIPE cycles late.
  wire        host_bank_in = {1'b0, bus_addr[WIN_LSB-1:0]} < BANK_DEPTH[32*host_bank +: WIN_LSB+1];
  wire [ADDR_W-1:0] host_gaddr = ({{(ADDR_W-3){1'b0}}, host_bank} << BANK_SHIFT) |
                                 {{(ADDR_W-WIN_LSB){1'b0}}, bus_addr[WIN_LSB-1:0]};
  // A full 32-bit word only: every register and memory word is written whole.
  wire        wr_full = (bus_wstrb == 4'hF);

  // ---- sequencer ----
  wire                 seq_busy;
  wire                 seq_done;
  wire                 seq_error;
  wire [3:0]           seq_error_code;
  wire [3:0]           seq_error_unit_code;
  wire [PROG_AW-1:0]   seq_error_pc;
  wire [PROG_AW-1:0]   seq_pc;
  wire [31:0]          lfsr_state;
  wire                 prog_rd_en;
  wire [PROG_AW-1:0]   prog_rd_addr;
  wire [31:0]          prog_rd_data;  // the program memory's read, behind its output register (tt_seq: latency 2)
  wire [DESC_BITS-1:0] ct_desc;  // the contraction engine's copy of its op's descriptor (tt_seq)
  wire [32*UNIT_WORDS-1:0] desc;  // the other units'
  wire [1:0]           unit;
  wire [3:0]           unit_start;
  wire                 unit_seed_load;
  wire [31:0]          unit_seed;
  wire [3:0]           unit_done;
  wire [3:0]           unit_error;
  wire [15:0]          unit_error_code;
  wire [127:0]         unit_sat;
  wire [4*MAX_W-1:0]   unit_maxabs;
  wire [63:0]          unit_lfsr;
  wire                 mem_addr_err;
  wire                 mem_port_err;
  wire [31:0]          stat_rd_sat;
  wire [MAX_W-1:0]     stat_rd_max;
  wire [63:0]          cycles;
  wire [255:0]         unit_cycles;
  wire [31:0]          ops;
  wire [31:0]          sat_total;

  reg [PROG_AW-1:0] start_pc_q;
  reg [N_W-1:0]     label_q;
  reg [31:0]        seed_q;
  wire              ctrl_wr = bus_go && bus_we && win_reg && reg_idx == REG_CTRL && wr_full;
  // CTRL's pulses (and a complete stream frame's start) reach the sequencer a cycle after the write, from a
  // register: the bus decode does not run into the program memory's address (a start selects the first fetch
  // address).
  wire              axis_launch;
  reg  [CTRL_W-1:0] ctrl_q;  // CTRL's bits
  always @(posedge clk) begin
    if (rst) begin
      ctrl_q <= {CTRL_W{1'b0}};
    end else begin
      ctrl_q <= (ctrl_wr ? bus_wdata[CTRL_W-1:0] : {CTRL_W{1'b0}}) |
                ({{(CTRL_W-1){1'b0}}, axis_launch} << CTRL_START_BIT);
    end
  end

  tt_seq #(.PROG_AW(PROG_AW), .PROG_DEPTH(PROG_DEPTH), .MAX_W(MAX_W), .DESC_BITS(DESC_BITS), .RANK(RANK),
          .UNIT_WORDS(UNIT_WORDS)) u_seq (
    .clk (clk), .rst (rst),
    .start (ctrl_q[CTRL_START_BIT]), .start_pc (start_pc_q), .clear_error (ctrl_q[CTRL_CLEAR_ERROR_BIT]),
    .clear_counters (ctrl_q[CTRL_CLEAR_COUNTERS_BIT]), .seed_load (ctrl_q[CTRL_SEED_BIT]), .seed (seed_q),
    .lfsr_state (lfsr_state), .busy (seq_busy), .done (seq_done), .error (seq_error),
    .error_code (seq_error_code), .error_unit_code (seq_error_unit_code), .error_pc (seq_error_pc), .pc (seq_pc),
    .prog_rd_en (prog_rd_en), .prog_rd_addr (prog_rd_addr), .prog_rd_data (prog_rd_data),
    .ct_desc (ct_desc), .desc (desc), .unit (unit), .unit_start (unit_start), .unit_seed_load (unit_seed_load),
    .unit_seed (unit_seed),
    .unit_done (unit_done), .unit_error (unit_error), .unit_error_code (unit_error_code), .unit_sat (unit_sat),
    .unit_maxabs (unit_maxabs), .unit_lfsr (unit_lfsr), .mem_addr_err (mem_addr_err), .mem_port_err (mem_port_err),
    .stat_rd_en (bus_go && !bus_we && win_stat), .stat_rd_addr (stat_slot), .stat_rd_sat (stat_rd_sat),
    .stat_rd_max (stat_rd_max), .stat_wr_sat_en (host_stat_wr && !bus_addr[0]),
    .stat_wr_max_en (host_stat_wr && bus_addr[0]), .stat_wr_addr (stat_slot), .stat_wr_data (bus_wdata),
    .cycles (cycles), .unit_cycles (unit_cycles), .ops (ops), .sat_total (sat_total)
  );

  // Memory-like windows are the host's only while the sequencer is not running.
  wire host_mem_ok = !seq_busy;
  wire host_stat_wr = bus_go && bus_we && win_stat && host_mem_ok && wr_full && stat_in;

  // ---- program memory ----
  localparam [PROG_AW:0] PROG_DEPTH_W = PROG_DEPTH[PROG_AW:0];
  wire       host_prog_in = ({1'b0, bus_addr[PROG_AW-1:0]} < PROG_DEPTH_W) &&
                            (bus_addr[WIN_LSB-1:PROG_AW] == {(WIN_LSB-PROG_AW){1'b0}});
  wire       host_prog_wr = bus_go && bus_we && win_prog && host_mem_ok && host_prog_in && wr_full;
  wire       host_prog_rd = bus_go && !bus_we && win_prog && host_mem_ok && host_prog_in;
  tt_prim_ram #(
    .WIDTH   (32),
    .DEPTH   (PROG_DEPTH),
    .AW      (PROG_AW),
    .OUT_REG (1),
    .TECH    (TECH)
  ) u_prog (
    .clk     (clk),
    .wr_en   (host_prog_wr),
    .wr_part (1'b1),
    .wr_addr (bus_addr[PROG_AW-1:0]),
    .wr_data (bus_wdata),
    .rd_en   (prog_rd_en || host_prog_rd),
    .rd_addr (prog_rd_en ? prog_rd_addr : bus_addr[PROG_AW-1:0]),
    .rd_data (prog_rd_data)
  );

  // ---- units ----
  wire [2:0]            rd_en_c;
  wire [3*ADDR_W-1:0]   rd_addr_c;
  wire [3*DATA_W-1:0]   rd_data;
  wire                  wr_en_c;
  wire [ADDR_W-1:0]     wr_addr_c;
  wire                  wr_run_c;
  wire [DRAIN*DATA_W-1:0] wr_data_c;
  wire [DATA_W-1:0]     rd0 = rd_data[0 +: DATA_W];
  wire [DATA_W-1:0]     rd1 = rd_data[DATA_W +: DATA_W];
  wire [DATA_W-1:0]     rd2 = rd_data[2*DATA_W +: DATA_W];
  wire [3*VEC*DATA_W-1:0] rd_vec;      // each logical port's row (vector loads, a wide drain's old runs)
  wire [VEC*UNIT_W-1:0] rd_vec0_unit;  // each port's words as the contraction engine's
  wire [VEC*UNIT_W-1:0] rd_vec1_unit;
  wire [VEC*UNIT_W-1:0] rd_vec2_unit;
  genvar vw;
  generate
    for (vw = 0; vw < VEC; vw = vw + 1) begin : g_vec_word
      assign rd_vec0_unit[UNIT_W*vw +: UNIT_W] = rd_vec[DATA_W*vw +: UNIT_W];
      assign rd_vec1_unit[UNIT_W*vw +: UNIT_W] = rd_vec[DATA_W*(VEC + vw) +: UNIT_W];
      assign rd_vec2_unit[UNIT_W*vw +: UNIT_W] = rd_vec[DATA_W*(2*VEC + vw) +: UNIT_W];
    end
    // only the low UNIT_W bits of each word, the contraction engine's
    wire unused_vec = ^rd_vec;
  endgenerate

  wire                  ct_busy, ct_done, ct_error;
  wire [3:0]            ct_error_code;
  wire [31:0]           ct_sat, ct_lfsr;
  wire [UNIT_W-1:0]     ct_maxabs;
  wire                  ct_a_en, ct_b_en, ct_o_en, ct_wr_en, ct_wr_run;
  wire [3:0]            ct_a_n1, ct_b_n1, ct_o_n1;  // the words each read takes after its address's (tt_contract)
  wire [ADDR_W-1:0]     ct_a_addr, ct_b_addr, ct_o_addr, ct_wr_addr;
  wire [DRAIN*UNIT_W-1:0] ct_wr_data;

  localparam integer CT_NOUT = 6;  // golden/arch.py MAX_OUT, MAX_RED
  localparam integer CT_NRED = 4;
  tt_contract #(.NOUT(CT_NOUT), .NRED(CT_NRED), .CNT_W(16), .ADDR_W(ADDR_W), .A_W(UNIT_W), .B_W(UNIT_W),
                .OUT_W(UNIT_W), .MEM_LAT(MEM_LAT), .LANES(LANES), .BUF_DEPTH(BUF_DEPTH), .PRELOAD(PRELOAD),
                .BUF_W(CT_STRIDE_BUF_W / (CT_NOUT + CT_NRED)), .VEC(VEC), .DRAIN(DRAIN), .ACC_W(ACC_W),
                .TECH(TECH)) u_contract (
    .clk (clk), .rst (rst), .seed_load (unit_seed_load), .seed (unit_seed), .lfsr_state (ct_lfsr),
    .start (unit_start[0]),
    .a_base (ct_desc[CT_A_BASE_LSB +: CT_A_BASE_W]), .b_base (ct_desc[CT_B_BASE_LSB +: CT_B_BASE_W]),
    .o_base (ct_desc[CT_O_BASE_LSB +: CT_O_BASE_W]), .counts (ct_desc[CT_COUNTS_LSB +: CT_COUNTS_W]),
    .stride_a (ct_desc[CT_STRIDE_A_LSB +: CT_STRIDE_A_W]), .stride_b (ct_desc[CT_STRIDE_B_LSB +: CT_STRIDE_B_W]),
    .stride_o (ct_desc[CT_STRIDE_O_LSB +: CT_STRIDE_O_W]), .shift (ct_desc[CT_SHIFT_LSB +: CT_SHIFT_W]),
    .mode (ct_desc[CT_MODE_LSB]), .accumulate (ct_desc[CT_ACCUMULATE_LSB]),
    .out_w (ct_desc[CT_OUT_W_LSB +: CT_OUT_W_W]),
    .lanes (ct_desc[CT_LANES_LSB +: CT_LANES_W]), .stride_buf (ct_desc[CT_STRIDE_BUF_LSB +: CT_STRIDE_BUF_W]),
    .preloaded (ct_desc[CT_PRELOADED_LSB]), .vec_load (ct_desc[CT_VEC_LOAD_LSB]),
    .vec_store (ct_desc[CT_VEC_STORE_LSB]),
    .pre_vec_load (ct_desc[CT_PRE_VEC_LOAD_LSB]), .lane_sum (ct_desc[CT_LANE_SUM_LSB]),
    .pre_lane_sum (ct_desc[CT_PRE_LANE_SUM_LSB]), .rows (ct_desc[CT_ROWS_LSB]),
    .idle_rows (ct_desc[CT_IDLE_ROWS_LSB +: CT_IDLE_ROWS_W]), .pre_rows (ct_desc[CT_PRE_ROWS_LSB]),
    .pre_lanes (ct_desc[CT_PRE_LANES_LSB +: CT_PRE_LANES_W]),
    .pre_b_base (ct_desc[CT_PRE_B_BASE_LSB +: CT_PRE_B_BASE_W]),
    .pre_counts (ct_desc[CT_PRE_COUNTS_LSB +: CT_PRE_COUNTS_W]),
    .pre_stride_b (ct_desc[CT_PRE_STRIDE_B_LSB +: CT_PRE_STRIDE_B_W]),
    .pre_stride_buf (ct_desc[CT_PRE_STRIDE_BUF_LSB +: CT_PRE_STRIDE_BUF_W]),
    .busy (ct_busy), .done (ct_done), .error (ct_error), .error_code (ct_error_code), .sat_count (ct_sat),
    .maxabs (ct_maxabs),
    .a_rd_en (ct_a_en), .a_rd_addr (ct_a_addr), .a_rd_data (rd0[UNIT_W-1:0]), .a_rd_n1 (ct_a_n1),
    .a_rd_vec_data (rd_vec0_unit),
    .b_rd_en (ct_b_en), .b_rd_addr (ct_b_addr), .b_rd_data (rd1[UNIT_W-1:0]), .b_rd_n1 (ct_b_n1),
    .b_rd_vec_data (rd_vec1_unit),
    .o_rd_en (ct_o_en), .o_rd_addr (ct_o_addr), .o_rd_data (rd2[UNIT_W-1:0]), .o_rd_n1 (ct_o_n1),
    .o_rd_vec_data (rd_vec2_unit),
    .o_wr_en (ct_wr_en), .o_wr_run (ct_wr_run), .o_wr_addr (ct_wr_addr), .o_wr_data (ct_wr_data)
  );

  wire                  ew_busy, ew_done, ew_error;
  wire [3:0]            ew_error_code;
  wire [31:0]           ew_sat, ew_lfsr;
  wire [DATA_W-1:0]     ew_maxabs;
  wire                  ew_x_en, ew_z_en, ew_o_en, ew_wr_en;
  wire [ADDR_W-1:0]     ew_x_addr, ew_z_addr, ew_o_addr, ew_wr_addr;
  wire [DATA_W-1:0]     ew_wr_data;

  tt_ewise #(.ADDR_W(ADDR_W), .X_W(DATA_W), .Z_W(DATA_W), .OUT_W(DATA_W), .MEM_LAT(MEM_LAT), .MASK_N(16),
             .ADAM(ADAM), .RANK(RANK)) u_ewise (
    .clk (clk), .rst (rst), .seed_load (unit_seed_load), .seed (unit_seed), .lfsr_state (ew_lfsr),
    .start (unit_start[1]),
    .opcode (desc[EW_OPCODE_LSB +: EW_OPCODE_W]), .count (desc[EW_COUNT_LSB +: EW_COUNT_W]),
    .x_base (desc[EW_X_BASE_LSB +: EW_X_BASE_W]), .z_base (desc[EW_Z_BASE_LSB +: EW_Z_BASE_W]),
    .y_base (desc[EW_Y_BASE_LSB +: EW_Y_BASE_W]), .alpha (desc[EW_ALPHA_LSB +: EW_ALPHA_W]),
    .beta (desc[EW_BETA_LSB +: EW_BETA_W]), .align_x (desc[EW_ALIGN_X_LSB +: EW_ALIGN_X_W]),
    .align_z (desc[EW_ALIGN_Z_LSB +: EW_ALIGN_Z_W]), .shift (desc[EW_SHIFT_LSB +: EW_SHIFT_W]),
    .mode (desc[EW_MODE_LSB]), .x_w (desc[EW_X_W_LSB +: EW_X_W_W]), .z_w (desc[EW_Z_W_LSB +: EW_Z_W_W]),
    .y_w (desc[EW_Y_W_LSB +: EW_Y_W_W]), .r0 (desc[EW_R0_LSB +: EW_R0_W]), .mn (desc[EW_MN_LSB +: EW_MN_W]),
    .r1 (desc[EW_R1_LSB +: EW_R1_W]), .tab_left (desc[EW_TAB_LEFT_LSB +: EW_TAB_LEFT_W]),
    .tab_right (desc[EW_TAB_RIGHT_LSB +: EW_TAB_RIGHT_W]), .tab_on (desc[EW_TAB_ON_LSB +: EW_TAB_ON_W]),
    .busy (ew_busy), .done (ew_done), .error (ew_error), .error_code (ew_error_code), .sat_count (ew_sat),
    .maxabs (ew_maxabs),
    .x_rd_en (ew_x_en), .x_rd_addr (ew_x_addr), .x_rd_data (rd0),
    .z_rd_en (ew_z_en), .z_rd_addr (ew_z_addr), .z_rd_data (rd1),
    .o_rd_en (ew_o_en), .o_rd_addr (ew_o_addr), .o_rd_data (rd2),
    .o_wr_en (ew_wr_en), .o_wr_addr (ew_wr_addr), .o_wr_data (ew_wr_data)
  );

  wire                  sce_busy, sce_done, sce_error;
  wire [3:0]            sce_error_code;
  wire [31:0]           sce_sat, sce_p_label;
  wire [N_W-1:0]        sce_pred;
  wire                  sce_z_en, sce_wr_en;
  wire [ADDR_W-1:0]     sce_z_addr, sce_wr_addr;
  wire [UNIT_W-1:0]     sce_wr_data;

  tt_sce #(.ADDR_W(ADDR_W), .Z_W(UNIT_W), .OUT_W(UNIT_W), .MEM_LAT(MEM_LAT), .N_W(N_W)) u_sce (
    .clk (clk), .rst (rst), .start (unit_start[2]),
    .z_base (desc[SCE_Z_BASE_LSB +: SCE_Z_BASE_W]), .e_base (desc[SCE_E_BASE_LSB +: SCE_E_BASE_W]),
    .n_out (desc[SCE_N_OUT_LSB +: SCE_N_OUT_W]), .classes (desc[SCE_CLASSES_LSB +: SCE_CLASSES_W]),
    .label (label_q), .frac_z (desc[SCE_FRAC_Z_LSB +: SCE_FRAC_Z_W]), .err_w (desc[SCE_ERR_W_LSB +: SCE_ERR_W_W]),
    .err_frac (desc[SCE_ERR_FRAC_LSB +: SCE_ERR_FRAC_W]),
    .busy (sce_busy), .done (sce_done), .error (sce_error), .error_code (sce_error_code), .sat_count (sce_sat),
    .pred (sce_pred), .p_label (sce_p_label),
    .z_rd_en (sce_z_en), .z_rd_addr (sce_z_addr), .z_rd_data (rd0[UNIT_W-1:0]),
    .o_wr_en (sce_wr_en), .o_wr_addr (sce_wr_addr), .o_wr_data (sce_wr_data)
  );

  // The rank-update unit: one read port (logical port 0) and the write port; 16-bit words (lambda's halves, the
  // masks, the taus and the master cores it reads all fit them).
  wire                  rk_busy, rk_done, rk_error;
  wire [3:0]            rk_error_code;
  wire                  rk_rd_en, rk_wr_en;
  wire [ADDR_W-1:0]     rk_rd_addr, rk_wr_addr;
  wire [UNIT_W-1:0]     rk_wr_data;
  generate
    if (RANK != 0) begin : g_rank
      tt_rank #(.ADDR_W(ADDR_W), .MEM_LAT(MEM_LAT), .MASK_N(16)) u_rank (
        .clk (clk), .rst (rst), .start (unit_start[3]),
        .left_base (desc[RK_LEFT_BASE_LSB +: RK_LEFT_BASE_W]), .right_base (desc[RK_RIGHT_BASE_LSB +: RK_RIGHT_BASE_W]),
        .lam_base (desc[RK_LAM_BASE_LSB +: RK_LAM_BASE_W]), .mask_base (desc[RK_MASK_BASE_LSB +: RK_MASK_BASE_W]),
        .tau_base (desc[RK_TAU_BASE_LSB +: RK_TAU_BASE_W]), .rank (desc[RK_RANK_LSB +: RK_RANK_W]),
        .left_rows (desc[RK_LEFT_ROWS_LSB +: RK_LEFT_ROWS_W]), .right_cols (desc[RK_RIGHT_COLS_LSB +: RK_RIGHT_COLS_W]),
        .inv_d (desc[RK_INV_D_LSB +: RK_INV_D_W]), .q_shift (desc[RK_Q_SHIFT_LSB +: RK_Q_SHIFT_W]),
        .threshold (desc[RK_THRESHOLD_LSB +: RK_THRESHOLD_W]), .tau_num (desc[RK_TAU_NUM_LSB +: RK_TAU_NUM_W]),
        .busy (rk_busy), .done (rk_done), .error (rk_error), .error_code (rk_error_code),
        .rd_en (rk_rd_en), .rd_addr (rk_rd_addr), .rd_data (rd0[UNIT_W-1:0]),
        .wr_en (rk_wr_en), .wr_addr (rk_wr_addr), .wr_data (rk_wr_data)
      );
    end else begin : g_no_rank
      // never started: tt_seq refuses RANK records without the unit
      wire unused_start = unit_start[3];
      assign {rk_busy, rk_done, rk_error, rk_error_code} = 7'd0;
      assign {rk_rd_en, rk_wr_en, rk_rd_addr, rk_wr_addr, rk_wr_data} = {(2 + 2 * ADDR_W + UNIT_W){1'b0}};
    end
  endgenerate

  wire unused_busy = ^{ct_busy, ew_busy, sce_busy, rk_busy};  // the sequencer waits on done

  assign unit_done = {rk_done, sce_done, ew_done, ct_done};
  assign unit_error = {rk_error, sce_error, ew_error, ct_error};
  assign unit_error_code = {rk_error_code, sce_error_code, ew_error_code, ct_error_code};
  assign unit_sat = {32'd0, sce_sat, ew_sat, ct_sat};
  // A wider word (Adam's v) is never an adaptive tensor's (observed): its max saturates to MAX_W bits.
  wire [MAX_W-1:0] ew_maxabs_c;
  generate
    if (DATA_W > MAX_W) begin : g_max_sat
      assign ew_maxabs_c = (|ew_maxabs[DATA_W-1:MAX_W]) ? {MAX_W{1'b1}} : ew_maxabs[MAX_W-1:0];
    end else begin : g_max_same
      assign ew_maxabs_c = ew_maxabs;
    end
  endgenerate
  assign unit_maxabs = {{(2*MAX_W){1'b0}}, ew_maxabs_c, ct_maxabs};
  assign unit_lfsr = {ew_lfsr, ct_lfsr};

  // ---- data memory: the running unit's ports, or the host's and the sample stream's while idle ----
  wire host_bank_rd = bus_go && !bus_we && win_bank && host_mem_ok;
  wire host_bank_wr = bus_go && bus_we && win_bank && host_mem_ok && wr_full;

  // ---- the sample stream ----
  reg  [ADDR_W-1:0] axis_base_q;     // STREAM_BASE
  reg  [ADDR_W-1:0] axis_words_q;    // STREAM_WORDS
  reg  [31:0]       axis_frames_q;   // STREAM_FRAMES: frames still allowed
  reg  [ADDR_W-1:0] axis_ptr_q;      // where the next sample word goes
  reg  [ADDR_W-1:0] axis_left_q;     // sample words still to come in this frame
  reg               axis_drop_q;     // dropping the rest of a bad frame, up to its tlast
  reg               axis_pending_q;  // a complete frame waits for its run to start
  reg               axis_err_q;      // STATUS b3
  wire [BB-1:0]     axis_bank = axis_ptr_q[BANK_SHIFT +: BB];
  wire              axis_in = (axis_ptr_q >> (BANK_SHIFT + BB)) == {ADDR_W{1'b0}} && {1'b0, axis_bank} < NBANK[BB:0] &&
                              {1'b0, axis_ptr_q[BANK_SHIFT-1:0]} < BANK_DEPTH[32*axis_bank +: BANK_SHIFT+1];
  assign s_axis_tready = !seq_busy && !seq_error && !axis_pending_q && axis_frames_q != 32'd0 && !host_bank_wr;
  wire              axis_beat = s_axis_tvalid && s_axis_tready;
  wire              axis_label = axis_left_q == {ADDR_W{1'b0}};  // this frame's next beat is its label
  wire              axis_wr = axis_beat && !axis_drop_q && !axis_label && axis_in;
  wire              axis_bad = axis_beat && !axis_drop_q &&
                               (axis_label ? !s_axis_tlast : (s_axis_tlast || !axis_in));
  assign            axis_launch = axis_beat && !axis_drop_q && axis_label && s_axis_tlast;
  wire              axis_reg_wr = bus_go && bus_we && win_reg && wr_full;
  always @(posedge clk) begin
    if (rst) begin
      axis_base_q <= {ADDR_W{1'b0}};
      axis_words_q <= {ADDR_W{1'b0}};
      axis_frames_q <= 32'd0;
      axis_ptr_q <= {ADDR_W{1'b0}};
      axis_left_q <= {ADDR_W{1'b0}};
      axis_drop_q <= 1'b0;
      axis_pending_q <= 1'b0;
      axis_err_q <= 1'b0;
    end else begin
      if (axis_reg_wr && reg_idx == REG_STREAM_BASE) begin
        axis_base_q <= bus_wdata[ADDR_W-1:0];
      end
      if (axis_reg_wr && reg_idx == REG_STREAM_WORDS) begin
        axis_words_q <= bus_wdata[ADDR_W-1:0];
      end
      if (axis_reg_wr && reg_idx == REG_STREAM_FRAMES) begin
        axis_frames_q <= bus_wdata;
      end else if (axis_launch) begin
        axis_frames_q <= axis_frames_q - 32'd1;
      end
      // a frame starts where the last one ended (tlast) or with a new base or length
      if ((axis_beat && s_axis_tlast) ||
          (axis_reg_wr && (reg_idx == REG_STREAM_BASE || reg_idx == REG_STREAM_WORDS))) begin
        axis_ptr_q <= (axis_reg_wr && reg_idx == REG_STREAM_BASE) ? bus_wdata[ADDR_W-1:0] : axis_base_q;
        axis_left_q <= (axis_reg_wr && reg_idx == REG_STREAM_WORDS) ? bus_wdata[ADDR_W-1:0] : axis_words_q;
        axis_drop_q <= 1'b0;
      end else if (axis_beat) begin
        axis_ptr_q <= axis_ptr_q + 1'b1;
        axis_left_q <= axis_label ? axis_left_q : axis_left_q - 1'b1;
        axis_drop_q <= axis_drop_q || axis_bad;
      end
      if (axis_launch) begin
        axis_pending_q <= 1'b1;
      end else if (seq_busy || seq_error) begin
        axis_pending_q <= 1'b0;  // the run has started (or failed to)
      end
      if (axis_bad) begin
        axis_err_q <= 1'b1;
      end else if (ctrl_q[CTRL_CLEAR_ERROR_BIT]) begin
        axis_err_q <= 1'b0;
      end
    end
  end
  reg [2:0]          rd_en_m;
  reg [3*ADDR_W-1:0] rd_addr_m;
  reg                wr_en_m;
  reg [ADDR_W-1:0]   wr_addr_m;
  reg [DATA_W-1:0]   wr_data_m;
  // 16-bit words (the contraction engine's, the softmax unit's, the stream's) sign-extended to the banks' width
  wire [DRAIN*DATA_W-1:0] ct_wr_ext;  // every word of a wide drain's run
  genvar rw;
  generate
    for (rw = 0; rw < DRAIN; rw = rw + 1) begin : g_run_word
      wire [UNIT_W-1:0] w = ct_wr_data[UNIT_W*rw +: UNIT_W];
      assign ct_wr_ext[DATA_W*rw +: DATA_W] = {{(DATA_W-UNIT_W+1){w[UNIT_W-1]}}, w[UNIT_W-2:0]};
    end
  endgenerate
  wire [DATA_W-1:0]  sce_wr_ext  = {{(DATA_W-UNIT_W+1){sce_wr_data[UNIT_W-1]}}, sce_wr_data[UNIT_W-2:0]};
  wire [DATA_W-1:0]  axis_wr_ext = {{(DATA_W-UNIT_W+1){s_axis_tdata[UNIT_W-1]}}, s_axis_tdata[UNIT_W-2:0]};
  wire [DATA_W-1:0]  rk_wr_ext   = {{(DATA_W-UNIT_W+1){rk_wr_data[UNIT_W-1]}}, rk_wr_data[UNIT_W-2:0]};
  always @* begin
    rd_en_m = 3'b000;
    rd_addr_m = {(3*ADDR_W){1'b0}};
    wr_en_m = 1'b0;
    wr_addr_m = {ADDR_W{1'b0}};
    wr_data_m = {DATA_W{1'b0}};
    if (!seq_busy) begin
      rd_en_m = {2'b00, host_bank_rd};
      rd_addr_m = {{(2*ADDR_W){1'b0}}, host_gaddr};
      wr_en_m = host_bank_wr || axis_wr;
      wr_addr_m = host_bank_wr ? host_gaddr : axis_ptr_q;
      wr_data_m = host_bank_wr ? bus_wdata[DATA_W-1:0] : axis_wr_ext;
    end else begin
      case (unit)
        2'd0: begin
          rd_en_m = {ct_o_en, ct_b_en, ct_a_en};
          rd_addr_m = {ct_o_addr, ct_b_addr, ct_a_addr};
          wr_en_m = ct_wr_en; wr_addr_m = ct_wr_addr; wr_data_m = ct_wr_ext[DATA_W-1:0];
        end
        2'd1: begin
          rd_en_m = {ew_o_en, ew_z_en, ew_x_en};
          rd_addr_m = {ew_o_addr, ew_z_addr, ew_x_addr};
          wr_en_m = ew_wr_en; wr_addr_m = ew_wr_addr; wr_data_m = ew_wr_data;
        end
        2'd2: begin
          rd_en_m = {2'b00, sce_z_en};
          rd_addr_m = {{(2*ADDR_W){1'b0}}, sce_z_addr};
          wr_en_m = sce_wr_en; wr_addr_m = sce_wr_addr; wr_data_m = sce_wr_ext;
        end
        default: begin
          rd_en_m = {2'b00, rk_rd_en};
          rd_addr_m = {{(2*ADDR_W){1'b0}}, rk_rd_addr};
          wr_en_m = rk_wr_en; wr_addr_m = rk_wr_addr; wr_data_m = rk_wr_ext;
        end
      endcase
    end
  end
  assign rd_en_c = rd_en_m;
  assign rd_addr_c = rd_addr_m;
  assign wr_en_c = wr_en_m;
  assign wr_addr_c = wr_addr_m;
  // A run's words past the first come from the contraction engine alone (the only unit that writes runs).
  assign wr_run_c = seq_busy && unit == 2'd0 && ct_wr_run;
  generate
    if (DRAIN > 1) begin : g_run_data
      assign wr_data_c = {ct_wr_ext[DRAIN*DATA_W-1:DATA_W], wr_data_m};
    end else begin : g_word_data
      assign wr_data_c = wr_data_m;
    end
  endgenerate

  tt_banks #(.NBANK(NBANK), .ADDR_W(ADDR_W), .DATA_W(DATA_W), .BANK_SHIFT(BANK_SHIFT),
             .BANK_DEPTH(BANK_DEPTH[NBANK*32-1:0]), .BANK_WIDTH(BANK_WIDTH[NBANK*32-1:0]),
             .BANK_PORTS(BANK_PORTS[NBANK*32-1:0]), .REG_IN(MEM_PIPED), .REG_REQ(MEM_PIPED),
             .REG_OUT(MEM_PIPE), .REG_DATA(MEM_PIPED), .BLOCK_BITS(RAM_BLOCK_BITS),
             .BANK_VEC(BANK_VEC[NBANK*32-1:0]), .VEC(VEC), .RUN(DRAIN), .TECH(TECH)) u_banks (
    .clk (clk), .rst (rst), .rd_en (rd_en_c), .rd_addr (rd_addr_c), .rd_data (rd_data),
    .rd_run_n1 ({ct_o_n1, ct_b_n1, ct_a_n1} & {12{seq_busy && unit == 2'd0}}), .rd_vec_data (rd_vec),
    .wr_en (wr_en_c), .wr_run (wr_run_c), .wr_addr (wr_addr_c), .wr_data (wr_data_c), .addr_err (mem_addr_err),
    .port_err (mem_port_err)
  );

  // ---- registers ----
  wire [STATUS_W-1:0] status;
  assign status[STATUS_BUSY_BIT]           = seq_busy;
  assign status[STATUS_DONE_BIT]           = seq_done;
  assign status[STATUS_ERROR_BIT]          = seq_error;
  assign status[STATUS_STREAM_ERROR_BIT]   = axis_err_q;
  assign status[STATUS_STREAM_PENDING_BIT] = axis_pending_q;
  wire [31:0] error_word = ({{(32-ERR_W){1'b0}}, seq_error_code} << ERROR_CODE_LSB) |
                           ({{(32-ERR_W){1'b0}}, seq_error_unit_code} << ERROR_UNIT_CODE_LSB) |
                           ({{(32-PROG_AW){1'b0}}, seq_error_pc} << ERROR_PC_LSB);
  reg [31:0] reg_rdata;
  reg        reg_ok;
  always @* begin
    reg_ok = 1'b1;
    case (reg_idx)
      REG_ID:               reg_rdata = ACCEL_ID;
      REG_STATUS:           reg_rdata = {{(32-STATUS_W){1'b0}}, status};
      REG_ERROR:            reg_rdata = error_word;
      REG_START_PC:         reg_rdata = {{(32-PROG_AW){1'b0}}, start_pc_q};
      REG_LABEL:            reg_rdata = {{(32-N_W){1'b0}}, label_q};
      REG_SEED:             reg_rdata = seed_q;
      REG_LFSR:             reg_rdata = lfsr_state;
      REG_PRED:             reg_rdata = {{(32-N_W){1'b0}}, sce_pred};
      REG_P_LABEL:          reg_rdata = sce_p_label;
      REG_CYCLES:           reg_rdata = cycles[31:0];
      REG_CYCLES + 8'd1:    reg_rdata = cycles[63:32];
      REG_UNIT_CYCLES:      reg_rdata = unit_cycles[31:0];
      REG_UNIT_CYCLES + 8'd1: reg_rdata = unit_cycles[63:32];
      REG_UNIT_CYCLES + 8'd2: reg_rdata = unit_cycles[95:64];
      REG_UNIT_CYCLES + 8'd3: reg_rdata = unit_cycles[127:96];
      REG_UNIT_CYCLES + 8'd4: reg_rdata = unit_cycles[159:128];
      REG_UNIT_CYCLES + 8'd5: reg_rdata = unit_cycles[191:160];
      REG_OPS:              reg_rdata = ops;
      REG_SAT_TOTAL:        reg_rdata = sat_total;
      REG_PC:               reg_rdata = {{(32-PROG_AW){1'b0}}, seq_pc};
      REG_STREAM_BASE:      reg_rdata = {{(32-ADDR_W){1'b0}}, axis_base_q};
      REG_STREAM_WORDS:     reg_rdata = {{(32-ADDR_W){1'b0}}, axis_words_q};
      REG_STREAM_FRAMES:    reg_rdata = axis_frames_q;
      REG_RANK_CYCLES:      reg_rdata = unit_cycles[223:192];
      REG_RANK_CYCLES + 8'd1: reg_rdata = unit_cycles[255:224];
      REG_P_BANK_SHIFT:     reg_rdata = BANK_SHIFT;
      REG_P_PROG_DEPTH:     reg_rdata = PROG_DEPTH;
      REG_P_DEPTH:          reg_rdata = BANK_DEPTH[0 +: 32];
      REG_P_DEPTH + 8'd1:   reg_rdata = BANK_DEPTH[32 +: 32];
      REG_P_DEPTH + 8'd2:   reg_rdata = BANK_DEPTH[64 +: 32];
      REG_P_DEPTH + 8'd3:   reg_rdata = BANK_DEPTH[96 +: 32];
      REG_P_WIDTH:          reg_rdata = BANK_WIDTH[0 +: 32];
      REG_P_WIDTH + 8'd1:   reg_rdata = BANK_WIDTH[32 +: 32];
      REG_P_WIDTH + 8'd2:   reg_rdata = BANK_WIDTH[64 +: 32];
      REG_P_WIDTH + 8'd3:   reg_rdata = BANK_WIDTH[96 +: 32];
      REG_P_PORTS:          reg_rdata = BANK_PORTS[0 +: 32];
      REG_P_PORTS + 8'd1:   reg_rdata = BANK_PORTS[32 +: 32];
      REG_P_PORTS + 8'd2:   reg_rdata = BANK_PORTS[64 +: 32];
      REG_P_PORTS + 8'd3:   reg_rdata = BANK_PORTS[96 +: 32];
      REG_P_SLOTS:          reg_rdata = 32'd1 << HDR_SLOT_W;
      REG_P_LANES:          reg_rdata = LANES;
      REG_P_BUF_DEPTH:      reg_rdata = BUF_DEPTH;
      REG_P_PRELOAD:        reg_rdata = PRELOAD;
      REG_P_ADAM:           reg_rdata = ADAM;
      REG_P_MOMENT:         reg_rdata = (ADAM != 0) ? BANK_DEPTH[128 +: 32] : 32'd0;
      REG_P_MOMENT + 8'd1:  reg_rdata = (ADAM != 0) ? BANK_WIDTH[128 +: 32] : 32'd0;
      REG_P_MOMENT + 8'd2:  reg_rdata = (ADAM != 0) ? BANK_PORTS[128 +: 32] : 32'd0;
      REG_P_RANK:           reg_rdata = RANK;
      REG_P_VEC:            reg_rdata = VEC;
      REG_P_VEC_BANKS:      reg_rdata = VEC_BANKS;
      REG_P_DRAIN:          reg_rdata = DRAIN;
      REG_P_ACC_W:          reg_rdata = ACC_W;
      default: begin reg_rdata = 32'd0; reg_ok = 1'b0; end
    endcase
  end
  wire reg_writable = REG_WRITABLE[reg_idx];

  always @(posedge clk) begin
    if (rst) begin
      start_pc_q <= {PROG_AW{1'b0}};
      label_q <= {N_W{1'b0}};
      seed_q <= 32'd0;
    end else if (bus_go && bus_we && win_reg && wr_full) begin
      case (reg_idx)
        REG_START_PC: start_pc_q <= bus_wdata[PROG_AW-1:0];
        REG_LABEL:    label_q <= bus_wdata[N_W-1:0];
        REG_SEED:     seed_q <= bus_wdata;
        default: ;
      endcase
    end
    if (!rst && axis_launch) begin
      label_q <= s_axis_tdata[N_W-1:0];  // a complete frame's label beat (after a LABEL write in the same cycle)
    end
  end

  // ---- acknowledge: one cycle after the transaction took effect ----
  reg [2:0]  ack_src_q;  // 0 register value, 1 program, 2 statistics sat, 3 statistics max, 4 bank
  reg [31:0] reg_rdata_q;
  reg        ack_err_q;
  wire       go_err = !wr_full && bus_we ? 1'b1 :
                      win_reg  ? (bus_we ? !reg_writable : !reg_ok) :
                      win_prog ? (!host_mem_ok || !host_prog_in) :
                      win_stat ? (!host_mem_ok || !stat_in) :
                      win_bank ? (!host_mem_ok || !host_bank_in) : 1'b1;
  // Reads that take more than a cycle: the banks (MEM_LAT), the program memory and the statistics (2: their block
  // RAMs' outputs are registered before the read-data mux, off the path to the AXI read data).
  wire       host_rd_slow = bus_go && !bus_we && (win_bank && (MEM_LAT > 1) || win_prog || win_stat);
  always @(posedge clk) begin
    if (rst) begin
      bus_ack_q <= 1'b0;
      host_rd_wait_q <= 3'd0;
    end else begin
      bus_ack_q <= (bus_go && !host_rd_slow) || (host_rd_wait_q == 3'd1);
      if (host_rd_slow) begin
        host_rd_wait_q <= win_prog || win_stat ? 3'd1 : MEM_LAT[2:0] - 3'd1;
      end else if (host_rd_wait_q != 3'd0) begin
        host_rd_wait_q <= host_rd_wait_q - 3'd1;
      end
    end
    if (bus_go) begin
      reg_rdata_q <= reg_rdata;
      ack_err_q <= go_err;
      ack_src_q <= bus_we   ? 3'd0 :
                   win_prog ? 3'd1 :
                   win_stat ? (bus_addr[0] ? 3'd3 : 3'd2) :
                   win_bank ? 3'd4 : 3'd0;
    end
  end
  reg [31:0]      stat_sat_q;
  reg [MAX_W-1:0] stat_max_q;
  always @(posedge clk) begin
    stat_sat_q <= stat_rd_sat;
    stat_max_q <= stat_rd_max;
  end
  always @* begin
    bus_err = ack_err_q;
    case (ack_src_q)
      3'd1: bus_rdata = prog_rd_data;
      3'd2: bus_rdata = stat_sat_q;
      3'd3: bus_rdata = {{(32-MAX_W){1'b0}}, stat_max_q};
      3'd4: bus_rdata = {{(33-DATA_W){rd0[DATA_W-1]}}, rd0[DATA_W-2:0]};
      default: bus_rdata = reg_rdata_q;
    endcase
    if (ack_err_q) begin
      bus_rdata = 32'd0;
    end
  end

  assign done = seq_done;
  assign error = seq_error;

endmodule
`default_nettype wire
